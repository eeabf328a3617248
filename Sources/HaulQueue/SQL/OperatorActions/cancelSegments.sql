-- Event transferEnded: the queued and running segments of canceled transfers stop. $1 transfer ids (bigint[]).
UPDATE segments SET state = 'failed', last_error = 'canceled', lease_token = NULL, updated_at = now() WHERE transfer_id = ANY($1::bigint[]) AND state IN ('queued','running')
