-- The ids and states of the transfers a filter picks, for a bulk operator action. $1 state,
-- $2 batch name, $3 host key, each NULL for any.
SELECT t.id, t.state FROM transfers t
WHERE {{TransferStore.filter}}
ORDER BY t.id
