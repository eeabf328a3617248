-- A transfer's current segments in detail, in file order. $1 transfer id.
SELECT s.idx, s.state, s.byte_offset, s.length, s.bytes_done, s.attempts, s.worker_id, s.last_error
FROM segments s JOIN transfers t ON t.id = s.transfer_id AND t.generation = s.generation WHERE t.id = $1 ORDER BY s.byte_offset
