-- Records (or forgets, NULL) the multipart upload of an extracted object, fenced by the
-- finalizing lease. $1 transfer id, $2 lease token, $3 key, $4 upload id or NULL.
UPDATE extracted_objects e SET upload_id = $4 FROM transfers t
WHERE e.transfer_id = $1 AND e.key = $3 AND t.id = e.transfer_id AND t.lease_token = $2::uuid
