-- Event probeFinished: the origin answered 304 Not Modified; the transfer is done with the file
-- kept, whose validators and name it takes. $1 transfer id, $2 lease token, $3 size, $4 ETag,
-- $5 Last-Modified, $6 the kept file's destination. {{namingOrigin}}: TransferLeases.namingOrigin().
UPDATE transfers SET state = 'done', unchanged = true, size = $3, etag = $4, last_modified = $5, error = NULL, error_code = NULL,
       dest = $6, options = {{namingOrigin}},
       lease_token = NULL, lease_expires_at = NULL, published_at = now(), finished_at = now(), updated_at = now()
WHERE id = $1 AND lease_token = $2::uuid AND state = 'planning'
