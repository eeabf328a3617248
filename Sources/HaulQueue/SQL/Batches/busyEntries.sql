-- The entries whose destination an active fleet transfer outside this batch (or of another URL)
-- already writes (destination-busy), the first such transfer of each. $1 URLs, $2 destinations
-- (text[], one length), $3 the active states (text[]), $4 batch name. Returns the entry's
-- 1-based index, its destination, and the transfer's id and state.
SELECT DISTINCT ON (e.i) e.i, e.d, t.id, t.state
FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS e(u, d, i)
JOIN transfers t ON t.dest = e.d AND t.owner IS NULL AND t.state = ANY($3::text[])
LEFT JOIN batches b ON b.id = t.batch_id
WHERE NOT (b.name IS NOT DISTINCT FROM $4 AND t.url = e.u)
ORDER BY e.i, t.id
