-- Per-host slot counters (issue 15): origin_hosts.busy is the number of connection slots in use
-- on that host — its running segments plus its planning transfers that hold a slot — so that a
-- claim reads one locked row instead of counting rows in a separate round trip.
--
-- Row triggers keep it: every statement that moves a row into or out of a slot-holding state
-- (a claim, complete, fail, release, rescue, cancel, pause, a batch probe handing its slot on,
-- a transfer deleted with its running segments) changes the counter in the same statement,
-- under the host row's lock, so it cannot drift from the rows whatever path moved them. Each
-- trigger's WHEN clause filters in the executor, so the frequent writes that leave the state
-- alone (checkpoints, lease renewals, straggler splits) call no function at all.
-- Note: TRUNCATE fires no row triggers; truncating segments or transfers by hand must reset
-- origin_hosts.busy too (UPDATE origin_hosts SET busy = 0).

ALTER TABLE origin_hosts ADD COLUMN busy integer NOT NULL DEFAULT 0 CHECK (busy >= 0);

CREATE FUNCTION haul_slot_delta(host text, delta integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE origin_hosts SET busy = busy + delta WHERE origin_hosts.host = haul_slot_delta.host;
    IF NOT FOUND AND delta > 0 THEN
        INSERT INTO origin_hosts (host, busy) VALUES (haul_slot_delta.host, delta)
        ON CONFLICT (host) DO UPDATE SET busy = origin_hosts.busy + excluded.busy;
    END IF;
END $$;

CREATE FUNCTION haul_count_segment_slots() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state = 'running' THEN PERFORM haul_slot_delta(OLD.host, -1); END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.state = 'running' THEN PERFORM haul_slot_delta(NEW.host, 1); END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION haul_count_probe_slots() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state = 'planning' AND OLD.holds_slot THEN PERFORM haul_slot_delta(OLD.host, -1); END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.state = 'planning' AND NEW.holds_slot THEN PERFORM haul_slot_delta(NEW.host, 1); END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER segments_slots_insert AFTER INSERT ON segments FOR EACH ROW
    WHEN (NEW.state = 'running') EXECUTE FUNCTION haul_count_segment_slots();
CREATE TRIGGER segments_slots_update AFTER UPDATE OF state, host ON segments FOR EACH ROW
    WHEN ((OLD.state = 'running') <> (NEW.state = 'running') OR (NEW.state = 'running' AND OLD.host <> NEW.host))
    EXECUTE FUNCTION haul_count_segment_slots();
CREATE TRIGGER segments_slots_delete AFTER DELETE ON segments FOR EACH ROW
    WHEN (OLD.state = 'running') EXECUTE FUNCTION haul_count_segment_slots();

CREATE TRIGGER transfers_slots_insert AFTER INSERT ON transfers FOR EACH ROW
    WHEN (NEW.state = 'planning' AND NEW.holds_slot) EXECUTE FUNCTION haul_count_probe_slots();
CREATE TRIGGER transfers_slots_update AFTER UPDATE OF state, holds_slot, host ON transfers FOR EACH ROW
    WHEN ((OLD.state = 'planning' AND OLD.holds_slot) <> (NEW.state = 'planning' AND NEW.holds_slot)
          OR (NEW.state = 'planning' AND NEW.holds_slot AND OLD.host <> NEW.host))
    EXECUTE FUNCTION haul_count_probe_slots();
CREATE TRIGGER transfers_slots_delete AFTER DELETE ON transfers FOR EACH ROW
    WHEN (OLD.state = 'planning' AND OLD.holds_slot) EXECUTE FUNCTION haul_count_probe_slots();

-- Start from the rows as they are now. CREATE TRIGGER above holds SHARE ROW EXCLUSIVE on both
-- tables until this transaction commits, so no write slips between the count and the triggers.
-- Old binaries still count rows during an upgrade; the counter equals that count, so both agree.
INSERT INTO origin_hosts (host) SELECT DISTINCT host FROM segments WHERE state = 'running' ON CONFLICT DO NOTHING;
INSERT INTO origin_hosts (host) SELECT DISTINCT host FROM transfers WHERE state = 'planning' AND holds_slot ON CONFLICT DO NOTHING;
UPDATE origin_hosts h SET busy = (SELECT count(*) FROM segments s WHERE s.state = 'running' AND s.host = h.host)
                               + (SELECT count(*) FROM transfers t WHERE t.state = 'planning' AND t.holds_slot AND t.host = h.host);
