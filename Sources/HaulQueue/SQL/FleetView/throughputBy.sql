-- The $2 busiest workers or hosts over the last $1 minutes, each with its bytes per minute,
-- oldest first (an array as text). {{source}}: rows of (name, minute, bytes) over the minutes m:
-- FleetView.workerMinutes or FleetView.hostMinutes.
WITH m AS (SELECT generate_series(date_trunc('minute', now()) - make_interval(mins => $1 - 1), date_trunc('minute', now()), interval '1 minute') AS minute),
s AS ({{source}}),
top AS (SELECT name, sum(bytes) AS total FROM s GROUP BY name ORDER BY 2 DESC, 1 LIMIT $2)
SELECT top.name, array_agg(coalesce(s.bytes, 0)::bigint ORDER BY m.minute)::text AS bytes
FROM top CROSS JOIN m LEFT JOIN s ON s.name = top.name AND s.minute = m.minute
GROUP BY top.name, top.total ORDER BY top.total DESC, top.name
