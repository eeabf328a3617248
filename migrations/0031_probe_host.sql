-- A probe on a mirror holds a slot of that mirror's host (issue 53). A planner whose probe of a
-- transfer's first mirror failed probes the next one in the same attempt: the row's slot moves
-- to that mirror's host (probe_host) for the probe, so the connection counts against the limit
-- of the host it goes to, and the planner skips a mirror whose host has no free slot.
--
-- A planning row that holds a slot holds it at coalesce(probe_host, host). probe_host is
-- cleared whenever the row stops holding a slot, whatever took it out of planning (the plan
-- written, a postpone, a release, a rescue, a cancel): a later claim counts at host again.

ALTER TABLE transfers ADD COLUMN probe_host text;

CREATE OR REPLACE FUNCTION haul_count_probe_slots() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state = 'planning' AND OLD.holds_slot THEN
        PERFORM haul_slot_delta(coalesce(OLD.probe_host, OLD.host), -1);
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.state = 'planning' AND NEW.holds_slot THEN
        PERFORM haul_slot_delta(coalesce(NEW.probe_host, NEW.host), 1);
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER transfers_slots_update ON transfers;
CREATE TRIGGER transfers_slots_update AFTER UPDATE OF state, holds_slot, host, probe_host ON transfers FOR EACH ROW
    WHEN ((OLD.state = 'planning' AND OLD.holds_slot) <> (NEW.state = 'planning' AND NEW.holds_slot)
          OR (NEW.state = 'planning' AND NEW.holds_slot AND coalesce(OLD.probe_host, OLD.host) <> coalesce(NEW.probe_host, NEW.host)))
    EXECUTE FUNCTION haul_count_probe_slots();

CREATE FUNCTION haul_clear_probe_host() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.probe_host := NULL;
    RETURN NEW;
END $$;

CREATE TRIGGER transfers_probe_host_cleared BEFORE UPDATE OF state, holds_slot ON transfers FOR EACH ROW
    WHEN (NEW.probe_host IS NOT NULL AND NOT (NEW.state = 'planning' AND NEW.holds_slot))
    EXECUTE FUNCTION haul_clear_probe_host();
