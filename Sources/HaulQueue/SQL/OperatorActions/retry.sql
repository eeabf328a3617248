-- Event retry on rows locked and judged allowed (OperatorAction.verdict): resumes where the
-- transfer stopped: pending when it has no segments (finalizing for an empty file), downloading
-- while a segment is unfinished, else finalizing. $1 transfer ids (bigint[]).
UPDATE transfers SET state = CASE WHEN NOT EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = transfers.id AND s.generation = transfers.generation)
                                  THEN (CASE WHEN size = 0 THEN 'finalizing' ELSE 'pending' END)
                                  WHEN EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = transfers.id AND s.generation = transfers.generation AND s.state <> 'done') THEN 'downloading'
                                  ELSE 'finalizing' END,
    computed_digest = CASE WHEN error_code = 'checksum-mismatch' THEN NULL ELSE computed_digest END,
    error = NULL, error_code = NULL, finished_at = NULL, lease_token = NULL, cleanup_pending = false, attempts = 0, restarts = 0,
    next_attempt_at = now(), updated_at = now(), {{OperatorActions.newRun}}
WHERE id = ANY($1::bigint[])
