-- A batch's id by name. $1 name.
SELECT id FROM batches WHERE name = $1
