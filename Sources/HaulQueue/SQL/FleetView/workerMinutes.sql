-- Fragment for throughputBy's {{source}}: bytes per worker and minute since the first minute of m.
SELECT worker_id AS name, minute, bytes FROM worker_throughput WHERE minute >= (SELECT min(minute) FROM m)
