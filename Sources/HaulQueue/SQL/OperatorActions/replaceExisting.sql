-- retry --force: the retried fleet transfers replace whatever is at their destinations from now
-- on (a get's transfers are left alone). $1 transfer ids (bigint[]).
UPDATE transfers SET options = options || '{"replace_existing": true}'::jsonb WHERE id = ANY($1::bigint[]) AND NOT options ? 'local_target'
