-- Fragment (included as {{OperatorActions.neverStarted}}): a condition on a transfers row that
-- never started (pending, or paused while pending, never claimed, never started over, no
-- segment, no upload): it has no partial file or upload anywhere, so canceling it is final at once.
coalesce(paused_from, state) = 'pending' AND generation = 0 AND attempts = 0 AND object_upload_id IS NULL
AND NOT EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = transfers.id)
