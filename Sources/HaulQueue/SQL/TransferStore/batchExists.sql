-- Whether a batch of that name exists. $1 name.
SELECT 1 FROM batches WHERE name = $1
