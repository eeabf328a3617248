-- Event pause on rows locked and judged allowed: paused, remembering the state it left.
-- $1 transfer ids (bigint[]).
UPDATE transfers SET paused_from = state, state = 'paused', updated_at = now() WHERE id = ANY($1::bigint[])
