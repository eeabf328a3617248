-- A worker's heartbeat: registers it, or refreshes its row and its rate from the bytes it fetched
-- since the last beat. $1 worker id, $2 host, $3 pid, $4 roles, $5 version, $6 bytes fetched in all.
INSERT INTO workers (id, host, pid, roles, version, bytes_fetched)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (id) DO UPDATE
SET rate = CASE WHEN extract(epoch FROM now() - workers.heartbeat_at) > 0
                THEN greatest(0, excluded.bytes_fetched - workers.bytes_fetched) / extract(epoch FROM now() - workers.heartbeat_at)
                ELSE workers.rate END,
    bytes_fetched = excluded.bytes_fetched,
    heartbeat_at = now(),
    stopped_at = NULL
