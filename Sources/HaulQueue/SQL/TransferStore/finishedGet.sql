-- Whether a haul get of a URL into a local target finished before. $1 URL, $2 local target. A row when one did.
SELECT 1 FROM transfers WHERE url = $1 AND options ? 'local_target' AND options->>'local_target' = $2 AND state = 'done' LIMIT 1
