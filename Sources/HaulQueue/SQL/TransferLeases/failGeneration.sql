-- Event transferEnded: the queued and running segments of a transfer that failed on starting over
-- stop (in failStartedOver's transaction). $1 transfer id, $2 generation.
UPDATE segments SET state = 'failed', lease_token = NULL WHERE transfer_id = $1 AND generation = $2 AND state IN ('queued','running')
