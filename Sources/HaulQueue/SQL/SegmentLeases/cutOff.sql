-- Fragment (included as {{SegmentLeases.cutOff}}): segment c is the piece a straggler split cut
-- off running segment s (it starts where s now ends) and nobody has fetched any of it yet.
(c.transfer_id = s.transfer_id AND c.generation = s.generation AND c.byte_offset = s.byte_offset + s.length
 AND c.state = 'queued' AND c.lease_token IS NULL AND c.attempts = 0 AND c.bytes_done = 0)
