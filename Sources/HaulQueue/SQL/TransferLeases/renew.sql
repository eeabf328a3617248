-- Renews a transfer lease; no row updated means it was lost. $1 transfer id, $2 lease token, $3 lease seconds.
UPDATE transfers SET lease_expires_at = now() + make_interval(secs => $3) WHERE id = $1 AND lease_token = $2::uuid
