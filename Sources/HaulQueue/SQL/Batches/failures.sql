-- A batch's first 20 failed transfers with their errors. $1 batch id.
SELECT id, coalesce(error, '') AS error FROM transfers WHERE batch_id = $1 AND state = 'failed' ORDER BY id LIMIT 20
