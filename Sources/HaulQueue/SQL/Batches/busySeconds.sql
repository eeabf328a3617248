-- The seconds in which any transfer of a batch was running (the union of their runs), for its
-- rate. $1 batch id.
SELECT extract(epoch FROM sum(upper(r) - lower(r)))::float8 AS busy
FROM unnest((
    SELECT range_agg(tstzrange(t.started_at, greatest(t.started_at, CASE WHEN t.state = 'paused' THEN t.updated_at ELSE coalesce(t.finished_at, now()) END)))
    FROM transfers t WHERE t.batch_id = $1 AND t.started_at IS NOT NULL
)) r
