-- A transfer's last $2 state changes, oldest first. $1 transfer id. They are its transfer_events,
-- and, for a small file its batch recorded from `pending` straight to `done`, that last change,
-- which is kept on the row itself (its state and finished_at; the record writes no event for it,
-- TransferLeases.finish(probed:)): a `done` transfer whose last event does not end in `done`.
-- That change takes the largest id there is, so that it sorts after every event.
SELECT at::text AS at, from_state, to_state, error FROM (
    SELECT id, at, from_state, to_state, error FROM transfer_events WHERE transfer_id = $1
    UNION ALL
    SELECT 9223372036854775807, coalesce(t.finished_at, t.updated_at), coalesce(last.to_state, 'pending'), 'done', NULL
    FROM transfers t LEFT JOIN LATERAL (
        SELECT to_state FROM transfer_events WHERE transfer_id = t.id ORDER BY id DESC LIMIT 1) last ON true
    WHERE t.id = $1 AND t.state = 'done' AND last.to_state IS DISTINCT FROM 'done'
    ORDER BY id DESC LIMIT $2) e ORDER BY id
