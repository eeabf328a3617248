-- Records the S3 multipart upload a planner began for its transfer (and the s3 layout), fenced by
-- the planning lease. $1 transfer id, $2 lease token, $3 upload id. {{s3Layout}}: StorageLayout.s3.
UPDATE transfers SET layout = '{{s3Layout}}', object_upload_id = $3, updated_at = now() WHERE id = $1 AND lease_token = $2::uuid AND state = 'planning'
