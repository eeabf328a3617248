-- Removes a bucket's announcements older than $2 seconds. $1 bucket.
DELETE FROM object_upload_intents WHERE bucket = $1 AND intended_at < now() - make_interval(secs => $2)
