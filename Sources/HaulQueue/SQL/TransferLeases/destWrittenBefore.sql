-- Whether an earlier done fleet transfer, of any URL, wrote a destination (the history, for a
-- file system that keeps no marks). $1 destination, $2 the asking transfer's id. A row when one did.
SELECT 1 FROM transfers WHERE dest = $1 AND state = 'done' AND owner IS NULL AND id <> $2 LIMIT 1
