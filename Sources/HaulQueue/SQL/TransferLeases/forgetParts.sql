-- Forgets the part files recorded for some segments of a transfer's generation (their files are
-- gone), before they are fetched again. $1 transfer id, $2 generation, $3 the segments' indexes (int[]).
DELETE FROM segment_parts p USING segments s
WHERE p.segment_id = s.id AND s.transfer_id = $1 AND s.generation = $2 AND s.idx = ANY($3::int[])
