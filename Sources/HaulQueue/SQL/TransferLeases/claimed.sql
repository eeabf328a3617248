-- Fragment (included as {{TransferLeases.claimed}}): transfer t is a small file a batch claim
-- holds in place, pending under a live lease (TransferLeases.claimedSQL, on t).
(t.state = 'pending' AND NOT {{TransferLeases.unleased}})
