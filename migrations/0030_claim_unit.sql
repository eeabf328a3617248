-- The small-file claim unit (issue 51).
--
-- 1. A batch claim leases its small files without moving them out of `pending`
--    (TransferLeases.restClaim): the claim writes only the lease columns, which no index of
--    transfers holds, so its row versions are HOT updates (no index entry, and no history row,
--    since the state does not change). A HOT update needs room on the row's own page for the
--    new version, a little longer than the one inserted (the lease columns were null); at the
--    default fill factor the rows a manifest inserts fill their pages and each claim moved its
--    rows to other pages, writing every index again. Of a 2000-file batch's claims, at a fill
--    factor of 60 % half were HOT, at 50 % 87 %, at 40 % all; but the table grows by as much
--    (1 000 000 finished rows: 257 MB at 100 %, 666 MB at 40 %), and so does every scan of it
--    (prune, the batches list). 50 % is the middle.
ALTER TABLE transfers SET (fillfactor = 50);

-- 2. Such a file goes from `pending` to `done` in its batch's record (finish(probed:)), which
--    writes the history rows of the whole batch in one INSERT in the same statement; the row
--    trigger, a PL/pgSQL call per row, now leaves those two transitions to it (the only
--    statement that makes them; `canceled` to `done` is a file canceled too late).
DROP TRIGGER transfers_history ON transfers;
CREATE TRIGGER transfers_history AFTER UPDATE OF state ON transfers FOR EACH ROW
    WHEN (OLD.state IS DISTINCT FROM NEW.state AND NOT (NEW.state = 'done' AND OLD.state IN ('pending', 'canceled')))
    EXECUTE FUNCTION haul_record_transfer_event();

-- 3. transfers_state held every row version: each file's `done` wrote an entry of it, and the
--    fleet's finished rows made it the table's size. It now holds the unfinished states only
--    (the counts of status and metrics, a canceled transfer's clean-up, `haul wait --batch`);
--    finished rows are counted through transfers_previous (FleetView.countsByState).
DROP INDEX transfers_state;
CREATE INDEX transfers_unfinished ON transfers (state) WHERE state <> 'done';

-- 4. A file the batch fetched whole has no segments row; the dashboard's bytes per origin and
--    minute, which summed the done segments, add these rows: one per origin and minute, written
--    once per batch record, kept 24 hours like worker_throughput (0029).
CREATE TABLE host_throughput (
    host   text NOT NULL,
    minute timestamptz NOT NULL,
    bytes  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (host, minute)
);
