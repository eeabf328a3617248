-- The names finished gets of some URLs saved into a local target. $1 URLs (text[]), $2 local target.
SELECT DISTINCT url, dest FROM transfers
WHERE url = ANY($1::text[]) AND options ? 'local_target' AND options->>'local_target' = $2 AND state = 'done' AND dest IS NOT NULL
ORDER BY url, dest
