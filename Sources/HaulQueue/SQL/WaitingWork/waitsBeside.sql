-- Whether work of another host waits while this worker holds its segment of host $3 (FairShare):
-- the host holds two slots or more, and another host with no slot has due work of priority $4
-- or higher, or a finalizing transfer waits. $1 worker, $2 the fallback default host limit.
-- {{owned}}: WorkScope's condition on t.owner for worker $1.
SELECT coalesce((SELECT busy FROM origin_hosts WHERE host = $3), 0) >= 2 AND (EXISTS (
    SELECT 1 FROM (
        (SELECT t.host FROM transfers t
         WHERE t.state = 'pending' AND t.next_attempt_at <= now() AND t.priority >= $4 AND t.host <> $3 AND {{owned}}
           AND {{TransferLeases.unleased}}
         LIMIT 500)
        UNION ALL
        (SELECT s.host FROM segments s JOIN transfers t ON t.id = s.transfer_id AND t.state = 'downloading' AND t.generation = s.generation
         WHERE s.state = 'queued' AND s.next_attempt_at <= now() AND s.priority >= $4 AND s.host <> $3 AND {{owned}}
         LIMIT 500)
    ) c
    JOIN origin_hosts h ON h.host = c.host LEFT JOIN origin_hosts d ON d.host = '*'
    WHERE h.busy = 0 AND coalesce(h.max_running, d.max_running, $2) > 0
) OR EXISTS (
    SELECT 1 FROM transfers t
    WHERE t.state = 'finalizing' AND t.next_attempt_at <= now() AND (t.lease_token IS NULL OR t.lease_expires_at < now())
      AND {{owned}}
)) AS waits
