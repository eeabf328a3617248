-- transfers_batch_entry (batch_id, url, dest) is no longer unique (issue 51). A unique index is
-- checked at every new entry: each row a manifest inserts and each new version of it (a small
-- file's `done` is not a HOT update) looked up the entries of its key and read their rows to
-- see whether they still live. On a batch record of 1024 small files that was 3.2 ms of 29.5
-- (EXPLAIN ANALYZE, seven runs each, by hand): about 3 µs a file, again at its insert.
--
-- What it guarded holds without it: only an enqueue adds rows to a batch (Batches.enqueue),
-- always under the enqueue's advisory lock (TransferStore.lockDestinations), so no two do it at
-- once. A batch it creates gets each entry once (Batches.firstOfEach); one it adds to skips the
-- entries the batch holds with NOT EXISTS (Batches/insertEntries.sql), read after the lock was
-- taken, where ON CONFLICT had needed the unique index. Lookups by batch use it as before.
DROP INDEX transfers_batch_entry;
CREATE INDEX transfers_batch_entry ON transfers (batch_id, url, dest) WHERE batch_id IS NOT NULL;
