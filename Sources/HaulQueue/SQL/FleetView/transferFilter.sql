-- Fragment (included as {{FleetView.transferFilter}}): the dashboard's transfer filter on
-- transfers t: $1 state, $2 batch name, $3 host key, $4 text in the URL or destination (a LIKE
-- pattern's escaped text) or the id; each NULL for any.
($1::text IS NULL OR t.state = $1) AND ($2::text IS NULL OR t.batch_id = (SELECT id FROM batches WHERE name = $2))
AND ($3::text IS NULL OR t.host = $3)
AND ($4::text IS NULL OR t.url ILIKE '%' || $4 || '%' OR t.dest ILIKE '%' || $4 || '%' OR t.id::text = $4)
