-- Announces a multipart upload about to begin (for the orphan sweep). $1 bucket, $2 key. Returns its id.
INSERT INTO object_upload_intents (bucket, key) VALUES ($1, $2) RETURNING id
