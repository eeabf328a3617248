-- Records, fenced by the finalizing lease, that the finalizer is about to rename its generation's
-- file into place. $1 transfer id, $2 lease token, $3 generation.
UPDATE transfers SET publishing_generation = $3 WHERE id = $1 AND lease_token = $2::uuid
