-- The states of some transfers' current segments, per transfer in file order. $1 transfer ids (bigint[]).
SELECT s.transfer_id, s.state FROM segments s JOIN transfers t ON t.id = s.transfer_id AND t.generation = s.generation
WHERE t.id = ANY($1::bigint[]) ORDER BY s.transfer_id, s.byte_offset
