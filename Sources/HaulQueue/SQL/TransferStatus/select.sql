-- Fragment (included as {{TransferStatus.select}}): a transfer's status as haul status, haul list
-- and the dashboard show it (TransferStatus), on transfers t, without its WHERE.
SELECT t.id, t.url, t.dest, t.state, t.unchanged, t.size, t.error, t.error_code, t.expected_digest, t.computed_digest, t.etag, t.last_modified,
       t.priority, t.layout, t.storage, t.generation, t.created_at::text AS created_at, t.finished_at::text AS finished_at,
       CASE WHEN {{TransferLeases.claimed}} THEN t.worker_id END AS claimed_by,
       coalesce(g.bytes_done, CASE WHEN t.state = 'done' AND NOT t.unchanged THEN t.size END, 0) AS bytes_done, coalesce(g.segments, 0) AS segments, coalesce(g.done, 0) AS done,
       coalesce(g.running, 0) AS running, coalesce(g.attempts, t.attempts, 0) AS attempts,
       CASE WHEN t.started_at IS NOT NULL AND extract(epoch FROM coalesce(t.finished_at, now()) - t.started_at) > 0
            THEN greatest(0, coalesce(g.bytes_done, 0) - t.run_base) / extract(epoch FROM coalesce(t.finished_at, now()) - t.started_at) END AS rate,
       CASE WHEN t.state = 'pending' AND t.error IS NOT NULL AND t.next_attempt_at > now()
            THEN extract(epoch FROM t.next_attempt_at - now())::float8 ELSE r.retry_in END AS retry_in,
       CASE WHEN t.state = 'pending' AND t.error IS NOT NULL AND t.next_attempt_at > now() THEN t.error ELSE r.reason END AS retry_reason
FROM transfers t
LEFT JOIN LATERAL (
    SELECT sum(s.bytes_done) AS bytes_done, count(*) AS segments, count(*) FILTER (WHERE s.state = 'done') AS done,
           count(*) FILTER (WHERE s.state = 'running') AS running, max(s.attempts) AS attempts
    FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation
) g ON true
LEFT JOIN LATERAL (
    SELECT extract(epoch FROM s.next_attempt_at - now())::float8 AS retry_in, s.last_error AS reason
    FROM segments s
    WHERE s.transfer_id = t.id AND s.generation = t.generation AND s.state = 'queued' AND s.attempts > 0
      AND s.last_error IS NOT NULL AND s.next_attempt_at > now() AND t.state = 'downloading'
    ORDER BY s.next_attempt_at LIMIT 1
) r ON true
