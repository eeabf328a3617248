-- Fragment for throughputBy's {{source}}: bytes per origin host and minute since the first
-- minute of m: of done segments, and of small files finished by their probe (host_throughput;
-- they have no segment row).
SELECT name, minute, sum(bytes)::bigint AS bytes FROM (
    SELECT host AS name, date_trunc('minute', updated_at) AS minute, bytes_done AS bytes FROM segments
    WHERE state = 'done' AND updated_at >= (SELECT min(minute) FROM m)
    UNION ALL SELECT host, minute, bytes FROM host_throughput WHERE minute >= (SELECT min(minute) FROM m)) b
GROUP BY 1, 2
