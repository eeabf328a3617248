-- A transfer's origin host and batch name. $1 transfer id.
SELECT t.host, b.name AS batch FROM transfers t LEFT JOIN batches b ON b.id = t.batch_id WHERE t.id = $1
