-- Event finished: the finalizer published the verified file and did what was asked after.
-- $1 transfer id, $2 lease token, $3 the computed digest or NULL.
UPDATE transfers SET state = 'done', computed_digest = $3, error = NULL, error_code = NULL, lease_token = NULL, lease_expires_at = NULL,
       finished_at = now(), updated_at = now()
WHERE id = $1 AND lease_token = $2::uuid AND state = 'finalizing'
