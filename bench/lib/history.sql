-- Gives a migrated Haul database the history of a fleet that has run for a while: :n finished
-- transfers (done within the last 7 days, inside the default retention, so pruning keeps
-- them), each with its segment and its state history as a worker leaves it, in a batch of
-- their own ('history'). bench/ab-small.sh (AB_HISTORY) times small files on top of it.
-- psql -v n=...
\set ON_ERROR_STOP on
SET client_min_messages = warning;
INSERT INTO batches (name) VALUES ('history') ON CONFLICT DO NOTHING;
ALTER TABLE transfers DISABLE TRIGGER USER;
ALTER TABLE segments DISABLE TRIGGER USER;
-- Inserted as an enqueue inserts them, then finished as a worker finishes them (one row version
-- each after the VACUUM): the pages hold what a fleet's pages hold. Rows inserted finished at
-- the table's fill factor (50 %, migration 0030) would leave every page with just the room of
-- one new row, which a fleet's never have: a batch enqueued on top had its rows spread one a
-- page over a thousand old pages (each read, written and logged whole after a checkpoint).
INSERT INTO transfers (url, host, dest, segment_size, batch_id, created_at)
  SELECT 'http://h' || (g % 50) || '.history.bench/old/f-' || g, 'h' || (g % 50) || '.history.bench', 'old/f-' || g, 8388608,
         (SELECT id FROM batches WHERE name = 'history'), now() - (g % 600000) * interval '1 second'
  FROM generate_series(1, :n) g;
UPDATE transfers SET state = 'done', size = 4096, accepts_ranges = true, computed_digest = 'sha256:' || md5(url) || md5(dest),
       worker_id = 'history-worker', started_at = created_at, published_at = created_at + interval '1 second',
       finished_at = created_at + interval '1 second', updated_at = created_at + interval '1 second'
  WHERE batch_id = (SELECT id FROM batches WHERE name = 'history');
VACUUM transfers;
INSERT INTO segments (transfer_id, idx, generation, host, byte_offset, length, bytes_done, state)
  SELECT id, 0, 0, host, 0, 4096, 4096, 'done' FROM transfers WHERE batch_id = (SELECT id FROM batches WHERE name = 'history');
INSERT INTO transfer_events (transfer_id, at, from_state, to_state)
  SELECT id, finished_at, s.f, s.t FROM transfers, (VALUES ('pending', 'planning'), ('planning', 'done')) s(f, t)
  WHERE batch_id = (SELECT id FROM batches WHERE name = 'history');
ALTER TABLE transfers ENABLE TRIGGER USER;
ALTER TABLE segments ENABLE TRIGGER USER;
VACUUM ANALYZE transfers;
VACUUM ANALYZE segments;
VACUUM ANALYZE transfer_events;
CHECKPOINT;
