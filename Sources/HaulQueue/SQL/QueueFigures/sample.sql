-- The segments of active transfers counted by state, and the queued ones due now. No parameters.
SELECT count(*) FILTER (WHERE s.state = 'queued') AS queued, count(*) FILTER (WHERE s.state = 'running') AS running,
       count(*) FILTER (WHERE s.state = 'done') AS done, count(*) FILTER (WHERE s.state = 'failed') AS failed,
       count(*) FILTER (WHERE s.state = 'queued' AND s.next_attempt_at <= now()) AS due
FROM transfers t JOIN segments s ON s.transfer_id = t.id AND s.generation = t.generation
WHERE t.state IN ('pending','planning','downloading','finalizing','paused')
