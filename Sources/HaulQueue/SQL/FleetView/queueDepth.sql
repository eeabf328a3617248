-- The queue's depth per minute over the last $1 minutes (queue_samples; NULL where none was taken).
SELECT extract(epoch FROM m.minute)::bigint AS minute, q.pending, q.downloading, q.segments_queued
FROM generate_series(date_trunc('minute', now()) - make_interval(mins => $1 - 1), date_trunc('minute', now()), interval '1 minute') AS m(minute)
LEFT JOIN queue_samples q ON q.minute = m.minute ORDER BY m.minute
