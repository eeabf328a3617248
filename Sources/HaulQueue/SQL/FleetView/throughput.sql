-- Bytes fetched by the fleet per minute over the last $1 minutes, oldest first (worker_throughput).
SELECT extract(epoch FROM m.minute)::bigint AS minute, coalesce(sum(w.bytes), 0)::bigint AS bytes
FROM generate_series(date_trunc('minute', now()) - make_interval(mins => $1 - 1), date_trunc('minute', now()), interval '1 minute') AS m(minute)
LEFT JOIN worker_throughput w ON w.minute = m.minute
GROUP BY m.minute ORDER BY m.minute
