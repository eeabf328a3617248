-- Queued work per origin host: queued segments and pending transfers. No parameters.
SELECT host, sum(n)::bigint AS n FROM (
    SELECT host, count(*) AS n FROM segments WHERE state = 'queued' GROUP BY host
    UNION ALL SELECT host, count(*) FROM transfers WHERE state = 'pending' GROUP BY host) q
GROUP BY host
