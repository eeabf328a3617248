-- Event resume on rows locked and judged allowed: back to the state it was paused in (a
-- planning one to pending), as a new run. $1 transfer ids (bigint[]).
UPDATE transfers SET state = CASE WHEN paused_from = 'planning' THEN 'pending' ELSE coalesce(paused_from, 'pending') END, paused_from = NULL, lease_token = NULL, updated_at = now(), {{OperatorActions.newRun}} WHERE id = ANY($1::bigint[])
