-- Event released: the segments the adopted transfer's former worker left running (it stopped)
-- are queued again. $1 transfer id.
UPDATE segments SET state = 'queued', lease_token = NULL WHERE transfer_id = $1 AND state = 'running'
