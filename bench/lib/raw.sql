-- pgbench script: the minimal SKIP LOCKED claim + complete (one segment), on Haul's own
-- segments table. Run with -M extended (bound parameters, like Haul's PQexecParams).
UPDATE segments SET state = 'running', lease_token = gen_random_uuid(), lease_expires_at = now() + interval '30 seconds', worker_id = 'pgbench', attempts = attempts + 1 WHERE id = (SELECT id FROM segments WHERE state = 'queued' ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id AS seg_id, lease_token::text AS tok
\gset
UPDATE segments SET state = 'done', bytes_done = length, lease_token = NULL WHERE id = :seg_id AND lease_token = :tok::uuid;
