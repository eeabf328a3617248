-- Seconds since the last heartbeat of a running worker (NULL when none runs), since any
-- worker was last heard of, and how many workers were ever registered. No parameters.
SELECT extract(epoch FROM now() - max(heartbeat_at) FILTER (WHERE stopped_at IS NULL))::float8 AS silent,
       extract(epoch FROM now() - max(coalesce(stopped_at, heartbeat_at)))::float8 AS last, count(*) AS n
FROM workers
