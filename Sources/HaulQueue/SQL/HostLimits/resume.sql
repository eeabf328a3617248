-- Gives a paused host (limit 0) back the limit it had when it was paused. $1 host key, $2 the
-- fallback default. Returns the limit it runs under now; no row when it was not paused.
UPDATE origin_hosts h SET max_running = h.resume_limit, resume_limit = NULL WHERE h.host = $1 AND h.max_running = 0
RETURNING coalesce(h.max_running, CASE WHEN h.host = '*' THEN NULL ELSE (SELECT max_running FROM origin_hosts WHERE host = '*') END, $2) AS max_running
