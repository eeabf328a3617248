-- Fragment (included as TransferLeases.claimed): transfer t is a small file a batch claim
-- holds in place, pending under a live lease (TransferLeases.claimedSQL, on t; the negation of
-- TransferLeases.unleased, which an included file may not include).
(t.state = 'pending' AND NOT (t.lease_token IS NULL OR t.lease_expires_at < now()))
