-- Records the mirrors of a batch's entries, found by batch, URL and destination, and marks them
-- mirrored. $1 batch id, $2 URLs, $3 destinations, $4 each entry's URLs joined by tabs, $5 their
-- host keys joined by tabs.
WITH entry AS (SELECT t.id, e.m, e.h FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS e(u, d, m, h)
               JOIN transfers t ON t.batch_id = $1 AND t.url = e.u AND t.dest = e.d),
     marked AS (UPDATE transfers SET mirrored = true WHERE id IN (SELECT id FROM entry))
INSERT INTO transfer_mirrors (transfer_id, idx, url, host)
SELECT entry.id, x.i - 1, x.mu, x.mh FROM entry, unnest(string_to_array(entry.m, E'\t'), string_to_array(entry.h, E'\t')) WITH ORDINALITY AS x(mu, mh, i)
ON CONFLICT DO NOTHING
