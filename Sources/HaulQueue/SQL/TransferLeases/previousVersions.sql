-- The newest earlier done transfer of each claim's URL into the same place (the same destination,
-- and for a get the same local file), with validators and size, for a conditional probe.
-- $1 transfer ids (bigint[]), $2 their URLs, $3 their destinations, $4 their local targets (NULL
-- for the fleet's), all of one length. One row per claim that has an earlier version.
--
-- Each claim's versions are looked up by its destination and URL (transfers_previous), a shape
-- no estimate changes. As a join of transfers with the arrays, the statement was planned from
-- statistics that may predate every done row (taken when a batch was enqueued on a young
-- database): PostgreSQL expected none, and hashed them all for each batch, so that a long list
-- cost time in the square of its length.
SELECT c.id, v.dest, v.etag, v.last_modified, v.size
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS c(id, url, dest, target)
CROSS JOIN LATERAL (
    SELECT t.dest, t.etag, t.last_modified, t.size FROM transfers t
    WHERE t.url = c.url AND t.dest = c.dest AND t.state = 'done' AND t.id <> c.id
      AND t.options->>'local_target' IS NOT DISTINCT FROM c.target
      AND t.size IS NOT NULL AND (t.etag IS NOT NULL OR t.last_modified IS NOT NULL)
    ORDER BY t.finished_at DESC LIMIT 1) v
