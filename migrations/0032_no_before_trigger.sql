-- A BEFORE ROW UPDATE trigger on transfers makes PostgreSQL lock each row it updates before
-- the update itself (GetTupleForTrigger), whichever columns the statement writes and whatever
-- the trigger's WHEN says: one more tuple write and WAL record (56 bytes) for every row version
-- of the queue's busiest table, the small files' HOT claim and their `done` included
-- (measured by hand, 5000 rows: 245 → 189 bytes of WAL a claimed row, 1109 → 1053 a done one).
--
-- transfers_probe_host_cleared (0031) was the only one. It cleared probe_host whenever a row
-- stopped holding a slot. The rule is now the other way round: probe_host means something only
-- while the row holds a slot (state 'planning' AND holds_slot), and every statement that gives
-- a row a slot writes it (the slot claim clears it, holdProbeSlot sets it). A row that gives its
-- slot back keeps a stale value that nothing reads; the slot counter still takes the slot back
-- at coalesce(OLD.probe_host, OLD.host), where the row held it.
DROP TRIGGER transfers_probe_host_cleared ON transfers;
DROP FUNCTION haul_clear_probe_host();
