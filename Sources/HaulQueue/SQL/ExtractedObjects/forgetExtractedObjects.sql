-- Forgets the objects an extraction recorded for a transfer (under lockLeased's lock). $1 transfer id.
DELETE FROM extracted_objects WHERE transfer_id = $1
