-- The states of a transfer's current segments, in file order. $1 transfer id.
SELECT s.state FROM segments s JOIN transfers t ON t.id = s.transfer_id AND t.generation = s.generation WHERE t.id = $1 ORDER BY s.byte_offset
