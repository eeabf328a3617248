-- Every multipart upload a row names: each transfer's (stopped: canceled or failed) and each
-- extracted object's. No parameters.
SELECT object_upload_id AS id, id AS transfer, state IN ('canceled', 'failed') AS stopped FROM transfers WHERE object_upload_id IS NOT NULL
UNION ALL SELECT upload_id, NULL, false FROM extracted_objects WHERE upload_id IS NOT NULL
