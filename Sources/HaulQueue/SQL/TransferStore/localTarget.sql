-- Of transfers $1 (bigint[]), the gets': each one's id and local target (fleet transfers have
-- none and are left out).
SELECT id, options->>'local_target' AS target FROM transfers WHERE id = ANY($1::bigint[]) AND options ? 'local_target'
