-- `haul get` looks up an earlier transfer of the same URL into the same local file (to resume
-- it, or to tell a file it saved from a user's). Those lookups read every row of transfers
-- (newest first, through the primary key) when there is none: on a fleet's database of a
-- million finished transfers, tens of milliseconds before each get's first byte. Only get
-- transfers carry a local target, so this index is small and batch inserts never write it.
CREATE INDEX transfers_local_target ON transfers (url) WHERE options ? 'local_target';
