-- A rerun haul get revises its transfer's checksum, headers, options and priority while it is
-- neither done nor canceled. $1 transfer id, $2 expected digest, $3 headers (JSON), $4 options (JSON), $5 priority.
UPDATE transfers SET expected_digest = $2, headers = $3::jsonb, options = $4::jsonb, priority = $5, updated_at = now()
WHERE id = $1 AND state NOT IN ('done', 'canceled')
