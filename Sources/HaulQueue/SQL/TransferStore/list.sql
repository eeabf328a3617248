-- haul list: the newest transfers' statuses. $1 state, $2 batch name, $3 host key (each NULL
-- for any), $4 how many at most.
{{TransferStatus.select}}
WHERE {{TransferStore.filter}}
ORDER BY t.id DESC LIMIT $4
