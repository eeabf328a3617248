-- Adds a chunk of entries to a batch that exists already; an entry the batch holds (same URL and
-- destination) is skipped. $1 URLs, $2 destinations, $3 segment sizes, $4 expected digests,
-- $5 priorities, $6 layouts, $7 headers (run-encoded JSON), $8 options (run-encoded JSON), $10
-- host keys: arrays of one length; $9 batch id. Affected rows: how many were new. Run under the
-- enqueue's advisory lock (TransferStore.lockDestinations): no other enqueue adds to the batch
-- meanwhile, so what NOT EXISTS reads stays true until the commit (migration 0033). A batch the
-- enqueue creates is loaded with COPY instead (Batches.copy).
INSERT INTO transfers (url, host, dest, segment_size, expected_digest, priority, layout, headers, options, batch_id)
SELECT u, k, d, s, c, p, l, h::jsonb, o::jsonb, $9
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $10::text[])
     AS e(u, d, s, c, p, l, h, o, k)
WHERE NOT EXISTS (SELECT 1 FROM transfers t WHERE t.batch_id = $9 AND t.url = e.u AND t.dest = e.d)
