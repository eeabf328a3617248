-- Of the retried transfers, those whose partial file another transfer of the same destination
-- and generation wrote since they stopped: their bytes may be the other's.
-- $1 transfer ids (bigint[]). Returns their ids.
SELECT DISTINCT o.id FROM transfers o
JOIN transfers t ON t.dest = o.dest AND t.generation = o.generation AND t.id <> o.id
WHERE o.id = ANY($1::bigint[]) AND o.state NOT IN ('done','canceled') AND t.started_at IS NOT NULL
  AND greatest(t.updated_at, (SELECT max(s.updated_at) FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation))
      > coalesce(o.finished_at, (SELECT max(s.updated_at) FROM segments s WHERE s.transfer_id = o.id AND s.generation = o.generation), o.updated_at)
