-- A transfer's last $2 state changes (transfer_events), oldest first. $1 transfer id.
SELECT at::text AS at, from_state, to_state, error FROM (
    SELECT * FROM transfer_events WHERE transfer_id = $1 ORDER BY id DESC LIMIT $2) e ORDER BY id
