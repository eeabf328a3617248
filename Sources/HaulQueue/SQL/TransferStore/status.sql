-- One transfer's status (TransferStatus). $1 transfer id.
{{TransferStatus.select}}
WHERE t.id = $1
