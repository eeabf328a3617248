-- What explains each transfer's wait (WaitReason): its state, its host's slots and limit, its
-- running segments, whether work of it is due, and its next retry with the reason.
-- $1 transfer ids (bigint[]), $2 the fallback default host limit.
SELECT t.id, t.state, t.host, coalesce(h.busy, 0) AS host_running, coalesce(h.max_running, d.max_running, $2) AS host_limit,
       (SELECT count(*) FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation AND s.state = 'running')
         + CASE WHEN {{TransferLeases.claimed}} THEN 1 ELSE 0 END AS running,
       CASE WHEN t.state = 'pending' THEN t.next_attempt_at <= now()
            ELSE EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation
                         AND s.state = 'queued' AND s.next_attempt_at <= now()) END AS due,
       to_char(CASE WHEN t.state = 'pending' THEN t.next_attempt_at ELSE w.at END AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"') AS backoff_until,
       CASE WHEN t.state = 'pending' THEN t.error ELSE w.error END AS backoff_reason
FROM transfers t LEFT JOIN origin_hosts h ON h.host = t.host LEFT JOIN origin_hosts d ON d.host = '*'
LEFT JOIN LATERAL (
    SELECT s.next_attempt_at AS at, s.last_error AS error FROM segments s
    WHERE s.transfer_id = t.id AND s.generation = t.generation AND s.state = 'queued' AND s.next_attempt_at > now()
    ORDER BY s.next_attempt_at LIMIT 1
) w ON true
WHERE t.id = ANY($1::bigint[])
