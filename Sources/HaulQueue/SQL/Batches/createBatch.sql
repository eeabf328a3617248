-- Creates a batch, or finds the one of that name. $1 name. Returns its id and whether this
-- statement created it (xmax = 0: the row is this insert, not the update of an existing one).
INSERT INTO batches (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id, xmax = 0 AS created
