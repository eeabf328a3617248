-- A manifest's rows no longer check their batch's row (issue 15): the foreign key from
-- transfers.batch_id to batches ran a query per inserted row, 21 of the 70 ms that inserting
-- 5 000 rows takes, while every worker waits for the enqueue to commit. Transfers are given a
-- batch only by `enqueue --manifest`, in the transaction that creates or locks the batch's row;
-- the one statement that deletes batches (`Retention.prune`, empty ones only) first takes a lock
-- that waits for such transactions, so it never removes a batch a manifest is filling.

ALTER TABLE transfers DROP CONSTRAINT IF EXISTS transfers_batch_id_fkey;
