-- Fragment (included as {{OperatorActions.nothingWritten}}): a condition on a transfers row that
-- nothing was ever written for, whatever its state: never claimed (or its claims given back
-- unused), never started over, no segment, no upload.
generation = 0 AND attempts = 0 AND object_upload_id IS NULL
AND NOT EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = transfers.id)
