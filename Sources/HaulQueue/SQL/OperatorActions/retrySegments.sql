-- Event retried: the failed (and running) segments of the retried transfers' current generation
-- are queued again. $1 transfer ids (bigint[]).
UPDATE segments s SET state = 'queued', attempts = 0, next_attempt_at = now(), last_error = NULL, lease_token = NULL, updated_at = now()
FROM transfers t WHERE t.id = ANY($1::bigint[]) AND s.transfer_id = t.id AND s.generation = t.generation AND s.state IN ('failed','running')
