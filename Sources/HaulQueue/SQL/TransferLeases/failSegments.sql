-- Event transferEnded: the unfinished segments of a transfer that just failed stop (in
-- failTransfer's transaction). $1 transfer id.
UPDATE segments SET state = 'failed', lease_token = NULL, last_error = coalesce(last_error, 'transfer failed'), updated_at = now() WHERE transfer_id = $1 AND state IN ('queued','running')
