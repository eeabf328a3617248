-- Whether other work waits for a lane while this worker holds its segment of transfer $5 from
-- host $3 (FairShare): the host holds two slots or more, and another host with no slot has due
-- work of priority $4 or higher, or a finalizing transfer waits; or the transfer holds two lanes
-- or more on its host, and another transfer of that host waits with none, of priority $4 or
-- higher: a new one (pending and due, among the first 500 pending; the host not paused) or a
-- downloading one with a due queued segment there and no running segment anywhere
-- (SegmentLeases.idleTransfer). $1 worker, $2 the fallback default host limit. {{owned}}:
-- WorkScope's condition on t.owner for worker $1.
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
)) OR (SELECT count(*) FROM segments WHERE state = 'running' AND host = $3 AND transfer_id = $5) >= 2 AND (EXISTS (
    SELECT 1 FROM (
        SELECT t.host FROM transfers t
        WHERE t.state = 'pending' AND t.next_attempt_at <= now() AND t.priority >= $4 AND {{owned}} AND {{TransferLeases.unleased}}
        ORDER BY t.priority DESC, t.id
        LIMIT 500
    ) c
    JOIN origin_hosts h ON h.host = c.host LEFT JOIN origin_hosts d ON d.host = '*'
    WHERE c.host = $3 AND coalesce(h.max_running, d.max_running, $2) > 0
) OR EXISTS (
    SELECT 1 FROM transfers t
    WHERE t.state = 'downloading' AND t.id <> $5 AND {{owned}}
      AND t.id NOT IN (SELECT transfer_id FROM segments WHERE state = 'running')
      AND EXISTS (SELECT 1 FROM segments s
                  WHERE s.transfer_id = t.id AND s.generation = t.generation AND s.state = 'queued' AND s.host = $3
                    AND s.priority >= $4 AND s.next_attempt_at <= now())
)) AS waits
