-- How many transfers prune would delete. $1 seconds, $2 states (text[]).
SELECT count(*) AS n FROM transfers WHERE {{Retention.prunable}}
