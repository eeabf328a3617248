-- Fragment (included as {{TransferLeases.unleased}}): no live lease holds transfer t; of the
-- pending rows, those a claim may take (TransferLeases.unleasedSQL, on t).
(t.lease_token IS NULL OR t.lease_expires_at < now())
