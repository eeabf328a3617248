-- Marks a new transfer mirrored and records its pieces (Metalink). $1 transfer id, $2 piece
-- length, $3 piece algorithm, $4 piece hashes (text[]); NULLs without pieces.
UPDATE transfers SET mirrored = true, piece_length = $2, piece_algorithm = $3, piece_hashes = $4::text[] WHERE id = $1
