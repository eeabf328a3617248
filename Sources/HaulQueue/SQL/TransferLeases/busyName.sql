-- Another active fleet transfer writing a destination the origin named for fleet transfer $2
-- (destination-busy). $1 destination, $2 the asking transfer's id, $3 the active states (text[]).
-- Returns its id and state; no row when none.
SELECT t.id, t.state FROM transfers t
WHERE t.dest = $1 AND t.owner IS NULL AND t.id <> $2 AND t.state = ANY($3::text[])
  AND (SELECT owner IS NULL FROM transfers WHERE id = $2)
ORDER BY t.id LIMIT 1
