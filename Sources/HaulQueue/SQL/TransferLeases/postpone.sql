-- Event planningReleased (a transient planning failure; a finalizing one keeps its state): the
-- lease holder hands its transfer back, to be tried again after a delay.
-- $1 transfer id, $2 lease token, $3 the error's text, $4 its code, $5 seconds before the next try.
UPDATE transfers SET state = CASE WHEN state = 'planning' THEN 'pending' ELSE state END, lease_token = NULL, lease_expires_at = NULL,
       error = $3, error_code = $4, next_attempt_at = now() + make_interval(secs => $5), updated_at = now()
WHERE id = $1 AND lease_token = $2::uuid
