-- Whether an earlier fleet transfer of the same URL was done writing a destination (the file
-- there is an older copy, which a re-mirror may replace). $1 URL, $2 destination, $3 the
-- asking transfer's id. A row when it was.
SELECT 1 FROM transfers WHERE url = $1 AND dest = $2 AND state = 'done' AND owner IS NULL AND id <> $3 LIMIT 1
