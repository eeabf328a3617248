-- The digests of some pieces of a transfer (Metalink), as a text array. $1 transfer id, $2 the
-- first piece's 1-based index, $3 the last's.
SELECT piece_hashes[$2:$3]::text AS hashes FROM transfers WHERE id = $1
