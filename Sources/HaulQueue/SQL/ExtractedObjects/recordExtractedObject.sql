-- Records an object an extraction into a bucket wrote, fenced by the finalizing lease.
-- $1 transfer id, $2 lease token, $3 key.
INSERT INTO extracted_objects (transfer_id, key)
SELECT id, $3 FROM transfers WHERE id = $1 AND lease_token = $2::uuid
ON CONFLICT (transfer_id, key) DO UPDATE SET recorded_at = now()
