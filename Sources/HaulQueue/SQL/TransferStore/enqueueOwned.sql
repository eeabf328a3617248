-- Records a chunk of a get's transfers, in the order given (rows are inserted and returned in the
-- ordered select's order). $1 URLs, $2 destinations, $3 segment sizes, $4 expected digests,
-- $5 priorities, $6 layouts, $7 headers (run-encoded JSON), $8 options (run-encoded JSON),
-- $9 owners, $10 host keys: arrays of one length. Returns the ids.
INSERT INTO transfers (url, host, dest, segment_size, expected_digest, priority, layout, headers, options, owner)
SELECT u, k, d, s, c, p, l, h::jsonb, o::jsonb, w
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
     WITH ORDINALITY AS e(u, d, s, c, p, l, h, o, w, k, n)
ORDER BY n
RETURNING id
