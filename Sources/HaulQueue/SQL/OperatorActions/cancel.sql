-- Event cancel on rows locked and judged allowed (OperatorAction.verdict): canceled, and marked
-- for a worker's clean-up unless it never started. $1 transfer ids (bigint[]).
UPDATE transfers SET state = 'canceled', cleanup_pending = NOT ({{OperatorActions.neverStarted}}), lease_token = NULL, finished_at = now(),
       updated_at = now(), error = NULL, error_code = NULL
WHERE id = ANY($1::bigint[])
