-- The planner's kept segment 0 fetches from the mirror that answered its probe (not the first
-- when that one failed), and holds its slot at that mirror's host: the probe's connection goes
-- on there. $1 transfer id, $2 generation, $3 the mirror's index.
UPDATE segments s SET mirror = $3, host = coalesce((SELECT m.host FROM transfer_mirrors m WHERE m.transfer_id = $1 AND m.idx = $3), s.host)
WHERE s.transfer_id = $1 AND s.generation = $2 AND s.idx = 0
