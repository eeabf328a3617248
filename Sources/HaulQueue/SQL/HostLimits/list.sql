-- Every host with its limit (its own or the default), whether it is its own, and its slots in
-- use now (running segments and probes), the default first. $1 the fallback default.
SELECT h.host, coalesce(h.max_running, d.max_running, $1) AS max_running, h.max_running IS NOT NULL AS explicit, h.busy AS running
FROM origin_hosts h LEFT JOIN origin_hosts d ON d.host = '*'
ORDER BY h.host = '*' DESC, h.host
