-- A fetcher's checkpoint: records a running segment's durable bytes and renews its lease,
-- computing its rate since the last checkpoint. No row when the lease is lost.
-- $1 segment id, $2 lease token, $3 bytes done (capped at the segment's length, which an idle
-- worker's split may have shrunk), $4 lease seconds.
-- Returns the transfer's state (anything but downloading tells the fetcher to stop) and the
-- segment's length (shorter than claimed: it was split).
UPDATE segments s SET bytes_done = least($3, coalesce(s.length, $3)), lease_expires_at = now() + make_interval(secs => $4), updated_at = now(),
       rate = CASE WHEN now() > s.updated_at THEN greatest(0, least($3, coalesce(s.length, $3)) - s.bytes_done) / extract(epoch FROM now() - s.updated_at) END
FROM transfers t
WHERE s.id = $1 AND s.lease_token = $2::uuid AND s.state = 'running' AND t.id = s.transfer_id
RETURNING t.state, s.length
