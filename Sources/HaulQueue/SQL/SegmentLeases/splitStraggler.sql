-- Straggler splitting (SegmentLeases.splitStraggler): cuts the running segment with the most
-- bytes left in two. The running worker keeps the first part (its length shrinks here) and
-- the rest becomes a new queued segment, which waits for the holder's word (settleCut.sql)
-- or, should none come, for two checkpoint intervals and a checkpoint's latency. Only segments
-- whose rate is recorded, of a transfer with ranges, not on S3, without pieces, and with no
-- queued segment due now nor a cut-off piece still waiting.
-- $1 smallest piece (bytes), $2 worker, $3 two checkpoints' bytes, $4 checkpoint interval
-- (seconds), $5 smallest piece (seconds at the segment's rate), $6 a checkpoint's latency
-- (seconds). The running worker keeps, past its recorded bytes_done, what it may receive
-- before it learns of the cut (SegmentLeases.splitStraggler), and 1 MiB in the sockets.
-- {{owned}}: WorkScope's condition on t.owner for worker $2; {{s3Layout}}: StorageLayout.s3.
-- Returns the transfer's id; no row when nothing was split.
WITH victim AS MATERIALIZED (
    SELECT s.id, s.transfer_id, s.generation, s.byte_offset, s.length, s.bytes_done, s.host, s.priority,
           s.bytes_done + h.room + ((s.length - s.bytes_done - h.room) / 2 / 1048576) * 1048576 AS keep
    FROM segments s JOIN transfers t ON t.id = s.transfer_id AND t.state = 'downloading' AND t.generation = s.generation
    CROSS JOIN LATERAL (SELECT least($3, (s.rate * 2 * $4)::bigint) + (s.rate * $6)::bigint + 1048576 AS room, greatest($1, (s.rate * $5)::bigint) AS piece) h
    WHERE s.state = 'running' AND s.rate IS NOT NULL AND s.length IS NOT NULL AND t.accepts_ranges AND t.layout <> '{{s3Layout}}' AND t.piece_length IS NULL
      AND s.length - s.bytes_done - h.room >= 2 * h.piece
      AND s.lease_expires_at > now() AND {{owned}}
      AND NOT EXISTS (SELECT 1 FROM segments q WHERE q.transfer_id = s.transfer_id AND q.generation = s.generation AND q.state = 'queued'
                      AND (q.next_attempt_at <= now() OR q.attempts = 0 AND q.bytes_done = 0))
    ORDER BY s.length - s.bytes_done DESC
    LIMIT 1 FOR UPDATE OF s SKIP LOCKED
), shrunk AS (
    UPDATE segments s SET length = v.keep, updated_at = now() FROM victim v WHERE s.id = v.id
    RETURNING v.*
)
INSERT INTO segments (transfer_id, generation, idx, host, priority, byte_offset, length, next_attempt_at)
SELECT transfer_id, generation, (SELECT max(idx) + 1 FROM segments WHERE transfer_id = shrunk.transfer_id AND generation = shrunk.generation),
       host, priority, byte_offset + keep, length - keep, now() + make_interval(secs => 2 * $4 + $6)
FROM shrunk
RETURNING transfer_id
