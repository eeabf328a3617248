-- Multipart uploads of canceled and failed transfers, to be aborted. $1 how many at most, $2
-- worker. {{owned}}: WorkScope's condition on owner for worker $2.
SELECT id, dest, object_upload_id FROM transfers
WHERE object_upload_id IS NOT NULL AND state IN ('canceled', 'failed') AND dest IS NOT NULL AND {{owned}}
ORDER BY id LIMIT $1
