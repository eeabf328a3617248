-- Deletes the batches left without transfers (under a lock on batches that waits for the
-- enqueues holding a batch's row). No parameters.
DELETE FROM batches b WHERE NOT EXISTS (SELECT 1 FROM transfers t WHERE t.batch_id = b.id)
