-- A transfer's rate is that of its current run: the bytes fetched since it started, or since an
-- operator's retry or resume, a rerun of its `haul get` or a new version at the origin started
-- it again, over the time since then. `started_at` is reset at each such start; `run_base`
-- holds the bytes its current generation had then, so that neither the time a transfer sat
-- failed or paused nor the bytes fetched before count in its rate (a transfer retried a day
-- later showed bytes per day). A constant default: no table rewrite.

ALTER TABLE transfers ADD COLUMN run_base bigint NOT NULL DEFAULT 0;
