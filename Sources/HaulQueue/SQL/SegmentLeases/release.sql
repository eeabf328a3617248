-- Event released: the lease holder gives its running segment back (shutdown, pause, cancel, a
-- lane yielding to waiting work), keeping its checkpointed bytes; the attempt does not count.
-- $1 segment id, $2 lease token, $3 seconds before it may be claimed again (0: at once).
UPDATE segments SET state = 'queued', lease_token = NULL, lease_expires_at = NULL, worker_id = NULL, attempts = greatest(attempts - 1, 0),
       next_attempt_at = CASE WHEN $3::float8 > 0 THEN now() + make_interval(secs => $3::float8) ELSE next_attempt_at END, updated_at = now()
WHERE id = $1 AND lease_token = $2::uuid AND state = 'running'
