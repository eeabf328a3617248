-- When uploads of some keys of a bucket were announced or recorded (epoch seconds).
-- $1 bucket, $2 keys (text[]).
SELECT key, extract(epoch FROM intended_at)::float8 AS at FROM object_upload_intents WHERE bucket = $1 AND key = ANY($2::text[])
UNION ALL SELECT key, extract(epoch FROM recorded_at)::float8 FROM extracted_objects WHERE key = ANY($2::text[])
