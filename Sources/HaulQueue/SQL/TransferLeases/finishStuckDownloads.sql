-- Event lastSegmentDone (the rescuer): moves on downloading transfers whose segments are all done
-- (for two seconds) but whose completion was lost in a database outage. No parameters.
UPDATE transfers t
SET state = 'finalizing', updated_at = now()
WHERE t.state = 'downloading'
  AND t.updated_at < now() - interval '2 seconds'
  AND EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation)
  AND NOT EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation AND s.state <> 'done')
