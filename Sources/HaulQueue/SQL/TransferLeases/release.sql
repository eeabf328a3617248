-- Event planningReleased (shutdown): hands a transfer back; planning returns to pending,
-- finalizing stays for another finalizer. $1 transfer id, $2 lease token.
UPDATE transfers SET state = CASE WHEN state = 'planning' THEN 'pending' ELSE state END, lease_token = NULL, lease_expires_at = NULL, attempts = greatest(attempts - 1, 0) WHERE id = $1 AND lease_token = $2::uuid
