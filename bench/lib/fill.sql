-- Fills a migrated Haul schema with :nseg queued segments, :per segments per transfer,
-- spread round-robin over :hosts origin hosts (transfers 'downloading', limit = the '*' default).
-- psql -v nseg=... -v per=... -v hosts=...
\set ON_ERROR_STOP on
TRUNCATE segment_parts, segments, transfers RESTART IDENTITY CASCADE;
DELETE FROM origin_hosts WHERE host <> '*';
INSERT INTO origin_hosts (host) SELECT 'h' || h || '.bench' FROM generate_series(0, :hosts - 1) h;
INSERT INTO transfers (url, host, dest, state, size, segment_size, accepts_ranges, started_at)
  SELECT 'http://h' || (g % :hosts) || '.bench/file-' || g, 'h' || (g % :hosts) || '.bench', 'file-' || g, 'downloading', :per::bigint * 1048576, 1048576, true, now()
  FROM generate_series(1, ceil(:nseg::numeric / :per)::int) g;
INSERT INTO segments (transfer_id, idx, generation, host, byte_offset, length)
  SELECT 1 + (g - 1) / :per, (g - 1) % :per, 0, 'h' || ((1 + (g - 1) / :per) % :hosts) || '.bench',
         ((g - 1) % :per)::bigint * 1048576, 1048576
  FROM generate_series(1, :nseg) g;
VACUUM ANALYZE origin_hosts;
VACUUM ANALYZE transfers;
VACUUM ANALYZE segments;
CHECKPOINT;
