-- A destination is the target of at most one active transfer: enqueue checks this index (under a
-- transaction-scoped advisory lock, so two enqueues cannot both pass) before it inserts. Not a unique
-- index: a transfer named from the response learns its destination only when planned, and the same
-- (batch, URL, destination) enqueued again is no conflict. `haul get` transfers (owner set) write
-- under their own folders and are not counted.
CREATE INDEX transfers_active_dest ON transfers (dest)
    WHERE owner IS NULL AND dest IS NOT NULL AND state IN ('pending','planning','downloading','finalizing','paused');
