-- Fragment (included as {{ClaimedSegment.returning}}): the columns of a claimed segment
-- (ClaimedSegment) on the segment s and its transfer t.
s.id, s.transfer_id, s.idx, s.generation, s.byte_offset, s.length, s.bytes_done, s.lease_token::text AS lease_token, s.attempts,
t.url, t.host, t.dest, t.size, t.etag, t.last_modified, t.accepts_ranges, t.layout, t.headers::text AS headers, t.options::text AS options,
t.segment_size, t.expected_digest, t.priority, t.object_upload_id, t.content_type, t.mirrored, t.piece_length, t.piece_algorithm,
s.mirror, (SELECT m.url FROM transfer_mirrors m WHERE m.transfer_id = s.transfer_id AND m.idx = s.mirror) AS mirror_url
