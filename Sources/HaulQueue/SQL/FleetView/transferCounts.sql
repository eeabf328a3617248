-- How many transfers are in each state. No parameters. The unfinished states are counted through
-- transfers_unfinished, done rows through transfers_previous (no index holds every state).
SELECT state, count(*) AS n FROM transfers WHERE state <> 'done' GROUP BY state
UNION ALL SELECT 'done', count(*) FROM transfers WHERE state = 'done'
