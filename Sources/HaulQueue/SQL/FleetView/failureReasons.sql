-- The most common failure reasons: error code and HTTP status, how many, an example. $1 how
-- many reasons at most, $2 batch name (NULL: all).
SELECT coalesce(error_code, 'unknown') || coalesce(' ' || substring(error FROM 'answered ([0-9]{3})'), '') AS code,
       count(*) AS n, coalesce(min(error), '') AS example
FROM transfers WHERE state = 'failed' AND ($2::text IS NULL OR batch_id = (SELECT id FROM batches WHERE name = $2))
GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $1
