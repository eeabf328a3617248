-- Event refetched: queues some done segments of a transfer's generation again from their first
-- byte (guarded by the transfer's finalizing lease, in refetchTransfer's transaction).
-- $1 transfer id, $2 generation, $3 the segments' indexes (int[]), $4 the reason.
UPDATE segments SET state = 'queued', bytes_done = 0, lease_token = NULL, lease_expires_at = NULL, worker_id = NULL, last_error = $4,
       updated_at = now()
WHERE transfer_id = $1 AND generation = $2 AND idx = ANY($3::int[])
