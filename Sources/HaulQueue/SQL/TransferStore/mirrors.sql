-- A transfer's mirrors with their figures, in order: bytes served, failures, state and reason,
-- the rate of its last attempt that served, and when a resting mirror is tried again.
-- $1 transfer id.
SELECT idx, url, bytes, failures, state, reason, rate,
       to_char(retry_after AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"') AS retry_after
FROM transfer_mirrors WHERE transfer_id = $1 ORDER BY idx
