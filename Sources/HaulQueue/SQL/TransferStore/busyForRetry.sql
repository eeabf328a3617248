-- For each fleet transfer of $1 (bigint[]) that a retry would start again, the first other
-- active fleet transfer writing its destination. $2 the active states (text[]). Returns the
-- retried transfer's id (retried) and the other's id, state and dest; none for a free one.
SELECT DISTINCT ON (o.id) o.id AS retried, t.id, t.state, t.dest
FROM transfers o JOIN transfers t ON t.dest = o.dest AND t.id <> o.id
WHERE o.id = ANY($1::bigint[]) AND o.owner IS NULL AND t.owner IS NULL AND t.state = ANY($2::text[])
ORDER BY o.id, t.id
