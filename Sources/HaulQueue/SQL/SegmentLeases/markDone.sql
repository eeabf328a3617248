-- Event completed: the lease holder marks its segment done. The fence is the lease token, not
-- the clock: a segment the rescuer queued again still carries its holder's token until another
-- worker claims it, so the finished work counts.
-- $1 segment id, $2 lease token, $3 bytes done, $4 the ETag of the part uploaded (S3) or NULL.
-- Returns bytes_done; no row when the lease was lost.
UPDATE segments SET state = 'done', bytes_done = least($3, coalesce(length, $3)), length = coalesce(length, $3), lease_token = NULL,
       lease_expires_at = NULL, last_error = NULL, updated_at = now(), part_etag = $4
WHERE id = $1 AND lease_token = $2::uuid AND state IN ('running', 'queued')
RETURNING bytes_done
