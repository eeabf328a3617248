-- What kinds of work exist for any worker (WorkProbe.whatToDo): a queued segment, a running one
-- (a straggler to split), a pending transfer no live lease holds, a finalizing transfer. Each
-- reads a partial index that is empty when the fleet is idle. No parameters.
--
-- The pending rows are read newest first (transfers_pending backwards): batch claims take the
-- oldest, whose rows stay pending under their leases, so read oldest first the check walked
-- past every claimed row to find one that is not (~1 ms with two batches of 1024 in flight).
SELECT EXISTS (SELECT 1 FROM segments WHERE state = 'queued') AS queued,
    EXISTS (SELECT 1 FROM segments WHERE state = 'running') AS running,
    (SELECT t.id FROM transfers t WHERE t.state = 'pending' AND {{TransferLeases.unleased}} ORDER BY t.priority, t.id DESC LIMIT 1) IS NOT NULL AS pending,
    EXISTS (SELECT 1 FROM transfers WHERE state = 'finalizing') AS finalizing
