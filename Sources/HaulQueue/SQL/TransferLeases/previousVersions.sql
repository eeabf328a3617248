-- The newest earlier done transfer of each claim's URL into the same place (the same destination,
-- and for a get the same local file), with validators and size, for a conditional probe.
-- $1 transfer ids (bigint[]), $2 their URLs, $3 their destinations, $4 their local targets (NULL
-- for the fleet's), all of one length. One row per claim that has an earlier version.
SELECT DISTINCT ON (c.id) c.id, t.dest, t.etag, t.last_modified, t.size
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS c(id, url, dest, target)
JOIN transfers t ON t.url = c.url AND t.dest = c.dest AND t.state = 'done' AND t.id <> c.id
     AND t.options->>'local_target' IS NOT DISTINCT FROM c.target
     AND t.size IS NOT NULL AND (t.etag IS NOT NULL OR t.last_modified IS NOT NULL)
ORDER BY c.id, t.finished_at DESC
