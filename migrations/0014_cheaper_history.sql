-- Cheaper bookkeeping on the hot path (issue 15), and a fix.
--
-- 1. A transfer's history is written by a row trigger that fires only on a change of state. The
--    statement trigger of 0004 captured every updated row twice (old and new transition tables)
--    for every UPDATE of transfers, lease renewals and slot hand-backs included, and joined them
--    after each statement; with many small files that cost a fifth of the database's CPU. The
--    WHEN clause is tested in the executor, so an update that leaves the state alone calls no
--    function at all.
-- 2. transfer_events no longer references transfers: each event row's foreign-key check took a
--    KEY SHARE lock on the transfer row it had just updated (a second heap write and WAL record
--    per change of state). The history is a log of what happened; Retention deletes a pruned
--    transfer's events in the statement that deletes the transfer.
-- 3. haul_slot_delta's INSERT for a host without a row named its conflict target `(host)`, which
--    PL/pgSQL cannot tell from the function's parameter `host`: the first slot taken on a host
--    that no enqueue had recorded failed with "column reference host is ambiguous".

DROP TRIGGER transfers_history ON transfers;
DROP FUNCTION haul_record_transfer_events();

CREATE FUNCTION haul_record_transfer_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO transfer_events (transfer_id, from_state, to_state, error) VALUES (NEW.id, OLD.state, NEW.state, NEW.error);
    RETURN NULL;
END $$;

CREATE TRIGGER transfers_history AFTER UPDATE OF state ON transfers FOR EACH ROW
    WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION haul_record_transfer_event();

ALTER TABLE transfer_events DROP CONSTRAINT transfer_events_transfer_id_fkey;

CREATE OR REPLACE FUNCTION haul_slot_delta(host text, delta integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE origin_hosts SET busy = busy + delta WHERE origin_hosts.host = haul_slot_delta.host;
    IF NOT FOUND AND delta > 0 THEN
        INSERT INTO origin_hosts AS o (host, busy) VALUES (haul_slot_delta.host, delta)
        ON CONFLICT ON CONSTRAINT origin_hosts_pkey DO UPDATE SET busy = o.busy + excluded.busy;
    END IF;
END $$;
