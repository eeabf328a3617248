-- Event fetchFailed: records a failed attempt of a running segment: queued again for a later
-- attempt, or failed.
-- $1 segment id, $2 lease token, $3 the error's message, $4 true to retry, $5 seconds before
-- the retry.
UPDATE segments SET state = CASE WHEN $4 THEN 'queued' ELSE 'failed' END, last_error = $3, lease_token = NULL, lease_expires_at = NULL,
       worker_id = NULL, next_attempt_at = now() + make_interval(secs => $5), updated_at = now()
WHERE id = $1 AND lease_token = $2::uuid AND state = 'running'
