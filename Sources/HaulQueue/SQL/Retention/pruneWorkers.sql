-- Deletes the registry rows of workers silent or stopped for $1 seconds, and at least an hour
-- (a live worker is never removed).
DELETE FROM workers WHERE coalesce(stopped_at, heartbeat_at) < now() - make_interval(secs => greatest($1::float8, 3600))
