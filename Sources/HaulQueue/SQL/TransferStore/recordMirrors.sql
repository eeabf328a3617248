-- Records a new transfer's mirrors, its own URL first (idx 0). $1 transfer id, $2 URLs (text[]), $3 their host keys.
INSERT INTO transfer_mirrors (transfer_id, idx, url, host)
SELECT $1, i - 1, u, h FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS m(u, h, i)
