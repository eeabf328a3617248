-- The newest $1 batches with their transfers counted by state, newest first.
SELECT b.name, b.created_at::text AS created_at, t.state, count(t.id) AS n
FROM (SELECT * FROM batches ORDER BY id DESC LIMIT $1) b LEFT JOIN transfers t ON t.batch_id = b.id
GROUP BY b.id, b.name, b.created_at, t.state ORDER BY b.id DESC
