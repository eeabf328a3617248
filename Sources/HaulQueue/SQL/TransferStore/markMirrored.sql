-- Marks a transfer mirrored. $1 transfer id.
UPDATE transfers SET mirrored = true WHERE id = $1
