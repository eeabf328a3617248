-- How many of some transfers are settled (done, failed or canceled), an id given twice counted
-- twice. $1 transfer ids (bigint[]).
SELECT count(*) AS settled
FROM unnest($1::bigint[]) AS given(id)
JOIN transfers t ON t.id = given.id
WHERE t.state IN ('done','failed','canceled')
