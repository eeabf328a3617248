-- Event failed: the finalizer found the finished file's digest wrong. Keeps the bytes and records
-- their digest, so that a retry expecting that digest publishes them as they are. Guarded by
-- the finalizing lease (held only in finalizing).
-- $1 transfer id, $2 lease token, $3 the error's text, $4 the computed digest (or NULL), $5 the error code.
UPDATE transfers SET state = 'failed', error = $3, error_code = $5, computed_digest = $4, lease_token = NULL,
       finished_at = now(), updated_at = now()
WHERE id = $1 AND lease_token = $2::uuid
