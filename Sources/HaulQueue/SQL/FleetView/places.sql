-- The origin host and batch name of some transfers. $1 transfer ids (bigint[]).
SELECT t.id, t.host, b.name AS batch FROM transfers t LEFT JOIN batches b ON b.id = t.batch_id WHERE t.id = ANY($1::bigint[])
