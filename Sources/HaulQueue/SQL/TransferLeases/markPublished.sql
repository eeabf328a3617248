-- Records that the verified file is in place, with its digest, fenced by the finalizing lease.
-- $1 transfer id, $2 lease token, $3 the digest (algorithm:hex) or NULL.
UPDATE transfers
SET computed_digest = $3, published_at = now(), updated_at = now()
WHERE id = $1
  AND lease_token = $2::uuid
