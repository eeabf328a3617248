-- Takes the finalizing lease on one transfer whose segments are all done (no lease, or one run
-- out), highest priority first. $1 lease seconds, $2 worker, $3 the worker's storage identity
-- (NULL: any). {{owned}}: WorkScope's condition on owner for worker $2; {{onStorage}}: its
-- condition that storage is $3. Returns the claim.
UPDATE transfers t SET lease_token = gen_random_uuid(), lease_expires_at = now() + make_interval(secs => $1), worker_id = $2,
       attempts = t.attempts + 1, started_at = coalesce(t.started_at, now()), updated_at = now()
WHERE t.id = (SELECT id FROM transfers
              WHERE state = 'finalizing' AND next_attempt_at <= now() AND (lease_token IS NULL OR lease_expires_at < now()) AND {{owned}}
                AND {{onStorage}}
              ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING {{TransferLeases.returning}}
