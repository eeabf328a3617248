-- Event failed: a transfer that started over once already fails instead, if the reporter still
-- holds its lease. $1 transfer id, $2 the reporter's generation, $3 the error's text, $4 its
-- code; from $5 the fence's parameters. {{fence}}: as in startOverTransfer.
UPDATE transfers SET state = 'failed', error = $3, error_code = $4, lease_token = NULL, finished_at = now(), updated_at = now()
WHERE id = $1 AND generation = $2 AND state IN ('planning','downloading','finalizing') AND {{fence}}
