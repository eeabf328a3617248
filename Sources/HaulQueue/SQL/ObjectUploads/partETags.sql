-- The ETags of a transfer's parts (its segments' uploads), in order. $1 transfer id, $2 generation.
SELECT idx, part_etag FROM segments WHERE transfer_id = $1 AND generation = $2 ORDER BY idx
