-- Fragment (included as {{Retention.prunable}}): a transfers row that prune may delete: in one of
-- the states $2 (text[]), cleaned up, finished at least $1 seconds ago.
state = ANY($2::text[]) AND NOT cleanup_pending AND finished_at <= now() - make_interval(secs => $1)
