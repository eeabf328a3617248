-- Another active fleet transfer writing the destination of fleet transfer $1, which a retry
-- would start again. $1 transfer id, $2 the active states (text[]). Returns its id, state, dest.
SELECT t.id, t.state, t.dest FROM transfers o JOIN transfers t ON t.dest = o.dest AND t.id <> o.id
WHERE o.id = $1 AND o.owner IS NULL AND t.owner IS NULL AND t.state = ANY($2::text[]) ORDER BY t.id LIMIT 1
