-- Records one new transfer. $1 URL, $2 destination (NULL: the origin names it), $3 segment size,
-- $4 expected digest, $5 priority, $6 layout, $7 headers (JSON), $8 options (JSON), $9 batch id,
-- $10 owner (a get's worker, or NULL for the fleet), $11 origin host key. Returns its id.
INSERT INTO transfers (url, host, dest, segment_size, expected_digest, priority, layout, headers, options, batch_id, owner)
VALUES ($1, $11, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10)
RETURNING id
