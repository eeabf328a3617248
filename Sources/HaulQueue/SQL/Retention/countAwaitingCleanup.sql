-- How many transfers old enough to prune still wait for a worker's clean-up. $1 seconds, $2 states (text[]).
SELECT count(*) AS n FROM transfers WHERE state = ANY($2::text[]) AND cleanup_pending AND finished_at <= now() - make_interval(secs => $1)
