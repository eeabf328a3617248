-- Event planningReleased (the rescuer): returns planning transfers whose planner's lease ran out
-- to pending, one host per run (rows in id order, skipping those another rescuer holds, so two
-- rescuers never deadlock). Run until it moves no row. No parameters.
WITH expired AS (
    SELECT id FROM transfers
    WHERE state = 'planning' AND lease_expires_at < now()
      AND host = (SELECT host FROM transfers WHERE state = 'planning' AND lease_expires_at < now() ORDER BY host LIMIT 1)
    ORDER BY id
    FOR UPDATE SKIP LOCKED
)
UPDATE transfers t SET state = 'pending', lease_token = NULL, lease_expires_at = NULL, updated_at = now()
FROM expired WHERE t.id = expired.id
