-- Event planningReleased: the planner found every mirror left to probe on a host at its limit:
-- it hands its transfer back without costing it an attempt, to be tried again after a delay.
-- $1 transfer id, $2 lease token, $3 seconds before the next try.
UPDATE transfers SET state = CASE WHEN state = 'planning' THEN 'pending' ELSE state END, lease_token = NULL, lease_expires_at = NULL,
       attempts = greatest(attempts - 1, 0), next_attempt_at = now() + make_interval(secs => $3), updated_at = now()
WHERE id = $1 AND lease_token = $2::uuid
