-- Some transfers' statuses (TransferStatus). $1 transfer ids (bigint[]).
{{TransferStatus.select}}
WHERE t.id = ANY($1::bigint[])
