-- How many workers are alive (a heartbeat within $1 seconds) and how many segments run now.
SELECT (SELECT count(*) FROM workers WHERE stopped_at IS NULL AND heartbeat_at > now() - make_interval(secs => $1)) AS alive,
       (SELECT count(*) FROM segments WHERE state = 'running') AS running
