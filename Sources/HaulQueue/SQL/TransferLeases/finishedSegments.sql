-- The segments of a transfer's generation with their recorded part files (parts layout), in
-- file order, for the finalizer. $1 transfer id, $2 generation.
SELECT s.idx, s.byte_offset, s.length, s.bytes_done, p.path, p.byte_offset AS part_offset, p.length AS part_length
FROM segments s LEFT JOIN segment_parts p ON p.segment_id = s.id
WHERE s.transfer_id = $1 AND s.generation = $2 ORDER BY s.byte_offset, p.byte_offset
