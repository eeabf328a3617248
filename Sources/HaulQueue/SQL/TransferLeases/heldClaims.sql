-- The ids of the claims whose planning lease is still held (the batch's fence before it
-- publishes). $1 transfer ids, $2 their lease tokens (one length).
--
-- Each row is looked up by its primary key (LATERAL … LIMIT 1, a shape no plan can change). As a
-- join of transfers with the arrays, the statement was planned from statistics taken when the
-- rows were enqueued, with no lease yet: expecting no row to pass lease_expires_at > now(), on
-- a table of up to some 60 000 rows PostgreSQL compared every row with every claim (a nested
-- loop over a sequential scan).
SELECT c.id FROM unnest($1::bigint[], $2::uuid[]) AS c(id, token)
CROSS JOIN LATERAL (
    SELECT FROM transfers t
    WHERE t.id = c.id AND t.lease_token = c.token AND (t.state || '') IN ('pending','planning') AND t.lease_expires_at > now()
    LIMIT 1) held
