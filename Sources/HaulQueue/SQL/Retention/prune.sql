-- Deletes the prunable transfers with their history and segments (which do not reference them),
-- in one statement. $1 seconds, $2 states (text[]). Returns how many transfers went.
WITH gone AS (DELETE FROM transfers WHERE {{Retention.prunable}} RETURNING id),
     history AS (DELETE FROM transfer_events e USING gone WHERE e.transfer_id = gone.id),
     segments AS (DELETE FROM segments s USING gone WHERE s.transfer_id = gone.id)
SELECT count(*) AS n FROM gone
