-- Records a tus upload URL (for another finalizer to resume) or the upload's answer, fenced by
-- the finalizing lease. $1 transfer id, $2 lease token, $3 URL or NULL, $4 answer or NULL.
UPDATE transfers SET upload_url = coalesce($3, upload_url), upload_result = coalesce($4, upload_result), updated_at = now() WHERE id = $1 AND lease_token = $2::uuid
