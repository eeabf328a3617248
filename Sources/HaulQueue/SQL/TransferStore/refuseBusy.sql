-- An active fleet transfer that already writes a destination (destination-busy).
-- $1 destination, $2 the active states (text[]). Returns its id and state; no row when none.
SELECT id, state FROM transfers WHERE dest = $1 AND owner IS NULL AND state = ANY($2::text[]) ORDER BY id LIMIT 1
