-- A fetcher's checkpoint: records a segment's durable bytes and renews its lease, computing its
-- rate since the last checkpoint. The fence is the lease token: a segment the rescuer put back
-- in the queue after its lease ran out keeps its holder's token until another worker claims it,
-- so the holder's late checkpoint still records its bytes (without a lease) and is told to stop.
-- No row when the lease is lost.
-- $1 segment id, $2 lease token, $3 bytes done (capped at the segment's length, which an idle
-- worker's split may have shrunk), $4 lease seconds.
-- Returns the transfer's state (anything but downloading tells the fetcher to stop), the
-- segment's length (shorter than claimed: it was split) and whether it was requeued.
UPDATE segments s SET bytes_done = least($3, coalesce(s.length, $3)), updated_at = now(),
       lease_expires_at = CASE WHEN s.state = 'running' THEN now() + make_interval(secs => $4) END,
       rate = CASE WHEN now() > s.updated_at THEN greatest(0, least($3, coalesce(s.length, $3)) - s.bytes_done) / extract(epoch FROM now() - s.updated_at) END
FROM transfers t
WHERE s.id = $1 AND s.lease_token = $2::uuid AND s.state IN ('running', 'queued') AND t.id = s.transfer_id
RETURNING t.state, s.length, s.state = 'queued' AS requeued
