-- Fragment (included as {{TransferStore.filter}}): haul list's and haul select's filter on
-- transfers t: $1 state, $2 batch name, $3 host key, each NULL for any.
($1::text IS NULL OR t.state = $1) AND ($2::text IS NULL OR t.batch_id = (SELECT b.id FROM batches b WHERE b.name = $2))
  AND ($3::text IS NULL OR t.host = $3)
