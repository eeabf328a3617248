-- Forgets a segment's part files other than $2 (parts layout), when an attempt restarted the
-- segment from its first byte. $1 segment id, $2 the part file kept (relative path).
DELETE FROM segment_parts WHERE segment_id = $1 AND path <> $2
