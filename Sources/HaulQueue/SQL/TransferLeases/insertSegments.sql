-- Writes a plan's segment rows; the first is claimed at once by the planner when $9 (its probe's
-- response is its body). $1 transfer id, $2 generation, $3 offsets (bigint[]), $4 lengths
-- (bigint[], NULL for an unknown length), $5 priority, $6 lease seconds, $7 worker, $8 host,
-- $9 keep the first.
INSERT INTO segments (transfer_id, generation, idx, byte_offset, length, priority, host, state, lease_token, lease_expires_at, worker_id, attempts)
SELECT $1, $2, i - 1, o, l, $5, $8,
       CASE WHEN i = 1 AND $9 THEN 'running' ELSE 'queued' END,
       CASE WHEN i = 1 AND $9 THEN gen_random_uuid() END,
       CASE WHEN i = 1 AND $9 THEN now() + make_interval(secs => $6) END,
       CASE WHEN i = 1 AND $9 THEN $7 END,
       CASE WHEN i = 1 AND $9 THEN 1 ELSE 0 END
FROM unnest($3::bigint[], $4::bigint[]) WITH ORDINALITY AS r(o, l, i)
