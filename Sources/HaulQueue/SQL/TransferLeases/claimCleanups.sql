-- Takes canceled transfers whose partial data still waits to be removed (cleanup_pending).
-- $1 how many at most, $2 worker. {{owned}}: WorkScope's condition on owner for worker $2.
-- Returns id, dest, generation.
UPDATE transfers t SET cleanup_pending = false
WHERE t.id IN (SELECT id FROM transfers WHERE cleanup_pending AND state = 'canceled' AND {{owned}}
               LIMIT $1 FOR UPDATE SKIP LOCKED)
RETURNING t.id, t.dest, t.generation
