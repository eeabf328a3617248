-- Records that --extract finished, fenced by the finalizing lease. $1 transfer id, $2 lease token.
UPDATE transfers SET extracted_at = now(), updated_at = now() WHERE id = $1 AND lease_token = $2::uuid
