-- A limit of 0 pauses an origin: the claims test `busy < limit`, so no segment or probe of it
-- is claimed while running ones finish their current segment. `resume_limit` keeps the limit
-- the host had when it was paused (NULL: the default), for `haul host-limit resume`.

ALTER TABLE origin_hosts DROP CONSTRAINT origin_hosts_max_running_check;
ALTER TABLE origin_hosts ADD CONSTRAINT origin_hosts_max_running_check CHECK (max_running IS NULL OR max_running >= 0);
ALTER TABLE origin_hosts ADD COLUMN resume_limit integer CHECK (resume_limit IS NULL OR resume_limit > 0);
