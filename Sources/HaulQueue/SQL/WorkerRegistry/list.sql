-- The workers (running ones, or all with $1), oldest first: identity, silence since their last
-- heartbeat, whether stopped, their last rate (null until a second heartbeat measured one: the
-- first, which registers the row, sets heartbeat_at to started_at) and how many segments they hold.
SELECT w.id, w.host, w.pid, w.roles, w.version, w.started_at::text AS started_at,
       extract(epoch FROM now() - w.heartbeat_at)::float8 AS silent, w.stopped_at IS NOT NULL AS stopped,
       CASE WHEN w.heartbeat_at > w.started_at THEN w.rate END AS rate,
       (SELECT count(*) FROM segments s WHERE s.worker_id = w.id AND s.state = 'running') AS held
FROM workers w WHERE $1 OR w.stopped_at IS NULL ORDER BY w.started_at
