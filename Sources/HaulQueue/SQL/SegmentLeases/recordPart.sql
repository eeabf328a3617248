-- Records (or grows) one part file of a segment (parts layout), in the transaction of the
-- segment's progress. $1 segment id, $2 relative path, $3 its first byte's file offset, $4 durable bytes.
INSERT INTO segment_parts (segment_id, path, byte_offset, length) VALUES ($1, $2, $3, $4)
ON CONFLICT (segment_id, path) DO UPDATE SET length = excluded.length
