-- Event retry (from scratch) on rows locked and judged allowed: starts the transfers over as a
-- new generation, forgetting what the origin said and a name the origin gave. $1 transfer ids (bigint[]).
UPDATE transfers SET state = 'pending', generation = generation + 1, restarts = 0, size = NULL, etag = NULL, last_modified = NULL,
       dest = CASE WHEN options ? 'named_by_origin' THEN NULL ELSE dest END, options = options - 'named_by_origin',
       accepts_ranges = NULL, published_at = NULL, extracted_at = NULL, upload_url = NULL, upload_result = NULL, paused_from = NULL,
       error = NULL, error_code = NULL, finished_at = NULL, lease_token = NULL, cleanup_pending = false, attempts = 0,
       next_attempt_at = now(), updated_at = now(), started_at = NULL, run_base = 0
WHERE id = ANY($1::bigint[])
