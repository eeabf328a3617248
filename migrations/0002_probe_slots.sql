-- A batch probe (many small files of one origin probed together) claims more transfers than it
-- opens connections: only the rows that hold one of the host's connection slots count against
-- its limit. A lone probe's row always holds one.
ALTER TABLE transfers ADD COLUMN holds_slot boolean NOT NULL DEFAULT true;

DROP INDEX transfers_planning_host;
CREATE INDEX transfers_planning_host ON transfers (host) WHERE state = 'planning' AND holds_slot;
