-- The statuses of transfers chosen by id (the dashboard's selection), newest first.
-- $1 transfer ids (bigint[]).
{{TransferStatus.select}}
WHERE t.id = ANY($1::bigint[]) ORDER BY t.id DESC
