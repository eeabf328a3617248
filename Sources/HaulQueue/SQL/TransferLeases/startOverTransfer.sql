-- Event originChanged (or the downloaded bytes are gone): the transfer starts over as a new
-- generation, once (restarts = 0), if the reporter still holds its lease.
-- $1 transfer id, $2 the reporter's generation, $3 the error's text, $4 its code; from $5 the
-- fence's parameters. {{fence}}: the reporter's lease condition (Reporter.fence, on the row or its segment).
UPDATE transfers SET state = 'pending', generation = generation + 1, restarts = restarts + 1, size = NULL, etag = NULL,
       last_modified = NULL, accepts_ranges = NULL, error = $3, error_code = $4, lease_token = NULL,
       next_attempt_at = now(), updated_at = now(), started_at = now(), run_base = 0
WHERE id = $1 AND generation = $2 AND state IN ('planning','downloading','finalizing') AND {{fence}} AND restarts = 0
