-- Event released (the rescuer): puts running segments whose lease ran out back in the queue,
-- one host per run (in id order, skipping rows another rescuer holds), keeping their bytes
-- and their lease token (the holder may still complete them). Run until it moves no row.
-- No parameters.
WITH expired AS (
    SELECT id FROM segments
    WHERE state = 'running' AND lease_expires_at < now()
      AND host = (SELECT host FROM segments WHERE state = 'running' AND lease_expires_at < now() ORDER BY host LIMIT 1)
    ORDER BY id
    FOR UPDATE SKIP LOCKED
)
UPDATE segments s SET state = 'queued', lease_expires_at = NULL, worker_id = NULL,
       last_error = coalesce(s.last_error, 'lease expired'), updated_at = now()
FROM expired WHERE s.id = expired.id
