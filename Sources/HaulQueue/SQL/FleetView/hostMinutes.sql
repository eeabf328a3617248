-- Fragment for throughputBy's {{source}}: bytes of done segments per origin host and minute since
-- the first minute of m.
SELECT host AS name, date_trunc('minute', updated_at) AS minute, sum(bytes_done)::bigint AS bytes FROM segments
WHERE state = 'done' AND updated_at >= (SELECT min(minute) FROM m) GROUP BY 1, 2
