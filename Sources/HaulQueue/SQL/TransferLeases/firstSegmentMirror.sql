-- The planner's kept segment 0 fetches from the mirror that answered its probe (not the first
-- when that one failed). $1 transfer id, $2 generation, $3 the mirror's index.
UPDATE segments SET mirror = $3 WHERE transfer_id = $1 AND generation = $2 AND idx = 0
