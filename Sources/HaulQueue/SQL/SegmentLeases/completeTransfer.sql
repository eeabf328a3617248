-- Event lastSegmentDone: moves a downloading transfer to finalizing once every segment of its
-- generation is done (run after each segment's completion; only the last one moves it).
-- $1 transfer id, $2 generation, $3 the size learned by reading an unknown-length body to its
-- end (NULL when the size was known).
UPDATE transfers SET state = 'finalizing', size = coalesce(size, $3), lease_token = NULL, updated_at = now()
WHERE id = $1 AND state = 'downloading' AND generation = $2
  AND NOT EXISTS (SELECT 1 FROM segments WHERE transfer_id = $1 AND generation = $2 AND state <> 'done')
