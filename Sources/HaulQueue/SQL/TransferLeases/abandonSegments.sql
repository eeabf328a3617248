-- Event transferEnded: the unfinished segments of the generation that started over are abandoned
-- (in startOverTransfer's transaction). $1 transfer id, $2 the old generation, $3 the reason.
UPDATE segments SET state = 'failed', lease_token = NULL, last_error = $3 WHERE transfer_id = $1 AND generation = $2 AND state <> 'done'
