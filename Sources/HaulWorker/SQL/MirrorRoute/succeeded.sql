-- Adds an attempt's bytes to its mirror's count. $1 transfer id, $2 mirror index, $3 bytes.
UPDATE transfer_mirrors SET bytes = bytes + $3, updated_at = now() WHERE transfer_id = $1 AND idx = $2
