-- What kinds of work exist for any worker (WorkProbe.whatToDo): a queued segment, a running one
-- (a straggler to split), a pending transfer no live lease holds, a finalizing transfer. Each
-- reads a partial index that is empty when the fleet is idle. No parameters.
SELECT EXISTS (SELECT 1 FROM segments WHERE state = 'queued') AS queued,
    EXISTS (SELECT 1 FROM segments WHERE state = 'running') AS running,
    EXISTS (SELECT 1 FROM transfers t WHERE t.state = 'pending' AND {{TransferLeases.unleased}}) AS pending,
    EXISTS (SELECT 1 FROM transfers WHERE state = 'finalizing') AS finalizing
