-- The objects an extraction recorded for a transfer, by key. $1 transfer id.
SELECT key, upload_id FROM extracted_objects WHERE transfer_id = $1 ORDER BY key
