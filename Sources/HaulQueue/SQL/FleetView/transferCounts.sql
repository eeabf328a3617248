-- How many transfers are in each state. No parameters.
SELECT state, count(*) AS n FROM transfers GROUP BY state
