-- A transfer's mirrors with their figures, in order. $1 transfer id.
SELECT idx, url, bytes, failures, state, reason FROM transfer_mirrors WHERE transfer_id = $1 ORDER BY idx
