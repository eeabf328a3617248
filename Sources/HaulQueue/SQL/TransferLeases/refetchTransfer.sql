-- Event partsMissing: some done segments' part files are gone before assembly; the finalizer
-- moves its transfer back to downloading (fenced by its lease), in the transaction that queues
-- those segments again (refetchSegments).
-- $1 transfer id, $2 lease token, $3 what is missing (kept as the transfer's error).
UPDATE transfers SET state = 'downloading', lease_token = NULL, lease_expires_at = NULL, error = $3, updated_at = now()
WHERE id = $1 AND lease_token = $2::uuid AND state = 'finalizing'
