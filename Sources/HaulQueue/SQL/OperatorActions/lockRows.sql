-- Locks the rows an operator action names, in id order, and reads what its verdict needs.
-- $1 transfer ids (bigint[]).
SELECT id, state, error_code, layout, ({{OperatorActions.nothingWritten}}) AS nothing_written
FROM transfers WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE
