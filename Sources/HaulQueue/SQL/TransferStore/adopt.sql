-- A rerun haul get adopts its unfinished transfer: its own worker (owner) runs it now, as a new
-- run. $1 transfer id, $2 the new owner.
UPDATE transfers SET owner = $2, lease_token = NULL, updated_at = now(), {{OperatorActions.newRun}} WHERE id = $1
