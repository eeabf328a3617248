-- Whether a batch has transfers still active; no row when there is no such batch. $1 name,
-- $2 the active states (text[]).
SELECT EXISTS (SELECT 1 FROM transfers t WHERE t.batch_id = b.id AND t.state = ANY($2::text[])) AS open
FROM batches b WHERE b.name = $1
