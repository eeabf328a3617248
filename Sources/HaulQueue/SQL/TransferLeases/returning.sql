-- Fragment (included as {{TransferLeases.returning}}): the columns of a transfer claim
-- (TransferLeases.Claim) on the claimed row t.
t.id, t.url, t.host, t.dest, t.size, t.etag, t.last_modified, t.accepts_ranges, t.layout, t.headers::text AS headers, t.options::text AS options,
t.segment_size, t.expected_digest, t.priority, t.object_upload_id, t.content_type, t.mirrored, t.piece_length, t.piece_algorithm, t.generation, t.lease_token::text AS lease_token, t.attempts
