-- Locks a transfer's row while the lease is held. $1 transfer id, $2 lease token. A row when it is.
SELECT 1 FROM transfers WHERE id = $1 AND lease_token = $2::uuid FOR UPDATE
