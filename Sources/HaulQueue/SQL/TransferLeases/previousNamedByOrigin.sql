-- The newest earlier version of each claim the origin names, among the done transfers of its URL
-- that {{earlier}} admits (SQL on the earlier transfer t and the claim c: earlierGets or
-- earlierFleetNames); none where a transfer of another URL saved a file under that name in the
-- same place after it. $1 transfer ids (bigint[]), $2 their URLs, $3 their local targets.
--
-- Each claim's newest version is looked up by its URL, in the index {{earlier}} leads to (the
-- condition on the state is part of {{earlier}}); previousVersions.sql says why.
SELECT p.* FROM (
    SELECT c.id, c.target, v.url, v.dest, v.etag, v.last_modified, v.size, v.finished_at
    FROM unnest($1::bigint[], $2::text[], $3::text[]) AS c(id, url, target)
    CROSS JOIN LATERAL (
        SELECT t.url, t.dest, t.etag, t.last_modified, t.size, t.finished_at FROM transfers t
        WHERE t.url = c.url AND t.id <> c.id AND {{earlier}} AND t.dest IS NOT NULL
          AND t.size IS NOT NULL AND (t.etag IS NOT NULL OR t.last_modified IS NOT NULL)
        ORDER BY t.finished_at DESC LIMIT 1) v) p
WHERE NOT EXISTS (
    SELECT 1 FROM transfers o
    WHERE o.dest = p.dest AND o.state = 'done' AND o.url <> p.url AND o.finished_at > p.finished_at
      AND (o.options->>'local_target' IS NOT DISTINCT FROM p.target OR o.options->>'local_target' = p.target || p.dest))
