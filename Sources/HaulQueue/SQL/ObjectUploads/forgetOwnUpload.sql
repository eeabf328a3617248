-- Forgets a transfer's multipart upload (it was completed or aborted), fenced by the lease.
-- $1 transfer id, $2 lease token.
UPDATE transfers SET object_upload_id = NULL WHERE id = $1 AND lease_token = $2::uuid
