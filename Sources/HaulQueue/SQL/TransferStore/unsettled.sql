-- Which of some transfers are not settled yet (neither done, failed nor canceled). $1 transfer ids (bigint[]).
SELECT id FROM transfers WHERE id = ANY($1::bigint[]) AND state NOT IN ('done','failed','canceled')
