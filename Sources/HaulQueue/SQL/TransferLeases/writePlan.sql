-- Event planWritten: the planner records (a small file a batch claim holds in place is still
-- pending) what its probe learned and moves the transfer on:
-- finalizing when there is no segment (an empty file), else downloading. Its attempts start
-- again from zero. $1 transfer id, $2 lease token, $3 destination, $4 size, $5 ETag,
-- $6 Last-Modified, $7 Content-Type, $8 accepts ranges, $9 true when there are no segments,
-- $10 true when the origin named the file, $11 storage (NULL: kept), $12 layout (NULL: kept), $13 the mirror that answered the probe
-- (NULL: no mirrors).
UPDATE transfers SET state = CASE WHEN $9 THEN 'finalizing' ELSE 'downloading' END, dest = $3, size = $4, etag = $5, last_modified = $6, content_type = $7, accepts_ranges = $8,
       storage = coalesce($11, storage), layout = coalesce($12, layout),
       options = CASE WHEN $10 THEN options || '{"named_by_origin": true}'::jsonb ELSE options END
                 || CASE WHEN $13::integer IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('probed_mirror', $13::integer) END,
       lease_token = NULL, lease_expires_at = NULL, attempts = 0, updated_at = now()
WHERE id = $1 AND lease_token = $2::uuid AND state IN ('pending','planning')
