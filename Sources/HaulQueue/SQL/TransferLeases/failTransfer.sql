-- Event failed: a permanent failure or the last attempt fails an active transfer.
-- $1 transfer id, $2 the error's text, $3 its code.
UPDATE transfers SET state = 'failed', error = $2, error_code = $3, lease_token = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now()
WHERE id = $1 AND state IN ('pending','planning','downloading','finalizing')
