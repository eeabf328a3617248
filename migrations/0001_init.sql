-- Haul's first schema: transfers cut into byte-range segments, claimed by workers under leases.
-- Every state change is one UPDATE guarded by the state it leaves.

CREATE TABLE batches (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE transfers (
    id               bigserial PRIMARY KEY,
    url              text NOT NULL,
    host             text NOT NULL,              -- the URL's host[:port], for per-host limits
    dest             text,                       -- relative to the storage root; NULL: named from the response
    state            text NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending','planning','downloading','finalizing','done','failed','canceled','paused')),
    paused_from      text,                       -- the state a paused transfer resumes to
    size             bigint,                     -- NULL until planned, or when the origin does not say
    etag             text,
    last_modified    text,
    content_type     text,
    accepts_ranges   boolean,
    segment_size     bigint NOT NULL CHECK (segment_size > 0),
    layout           text NOT NULL DEFAULT 'inplace' CHECK (layout IN ('inplace','parts')),
    expected_digest  text,                       -- 'sha256:hex'
    computed_digest  text,
    headers          jsonb NOT NULL DEFAULT '[]', -- request headers, may hold secrets: never printed
    options          jsonb NOT NULL DEFAULT '{}', -- tls, extract, upload and other finalizer options
    priority         integer NOT NULL DEFAULT 0,
    batch_id         bigint REFERENCES batches(id),
    owner            text,                       -- set by 'haul get': only that process's worker may work on it
    generation       integer NOT NULL DEFAULT 0, -- bumped whenever the transfer starts over (new files, new segments)
    restarts         integer NOT NULL DEFAULT 0, -- automatic starts-over because the origin changed (at most one)
    error            text,
    error_code       text,
    unchanged        boolean NOT NULL DEFAULT false, -- re-mirror: the origin answered 304, the file was kept
    published_at     timestamptz,                -- the verified file is in place under dest
    extracted_at     timestamptz,                -- --extract finished
    upload_url       text,                       -- tus: the upload to resume (a capability: never printed)
    upload_result    text,                       -- the upload's status line and body
    cleanup_pending  boolean NOT NULL DEFAULT false, -- canceled: a worker still has to remove partial data
    lease_token      uuid,                       -- planner's or finalizer's lease on the transfer row
    lease_expires_at timestamptz,
    worker_id        text,
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz
);

CREATE INDEX transfers_pending ON transfers (priority DESC, id) WHERE state = 'pending';
CREATE INDEX transfers_planning_host ON transfers (host) WHERE state = 'planning';
CREATE INDEX transfers_active ON transfers (id) WHERE state IN ('planning','downloading','finalizing');
CREATE INDEX transfers_batch ON transfers (batch_id) WHERE batch_id IS NOT NULL;
-- Enqueuing a manifest again adds nothing that is already there.
CREATE UNIQUE INDEX transfers_batch_entry ON transfers (batch_id, url, dest) WHERE batch_id IS NOT NULL;
CREATE INDEX transfers_state ON transfers (state);
CREATE INDEX transfers_previous ON transfers (url, dest) WHERE state = 'done';

CREATE TABLE segments (
    id               bigserial PRIMARY KEY,
    transfer_id      bigint NOT NULL REFERENCES transfers(id) ON DELETE CASCADE,
    idx              integer NOT NULL,
    generation       integer NOT NULL,
    host             text NOT NULL,              -- origin host[:port], for per-host limits
    byte_offset      bigint NOT NULL CHECK (byte_offset >= 0),
    length           bigint CHECK (length IS NULL OR length >= 0), -- NULL: to the end of an unknown-length body
    bytes_done       bigint NOT NULL DEFAULT 0 CHECK (bytes_done >= 0),
    state            text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','running','done','failed')),
    priority         integer NOT NULL DEFAULT 0,
    lease_token      uuid,
    lease_expires_at timestamptz,
    worker_id        text,
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_error       text,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (transfer_id, generation, idx)
) WITH (fillfactor = 80);

-- The claim reads only queued rows; finished rows stay out of this index.
CREATE INDEX segments_claimable ON segments (priority DESC, id) WHERE state = 'queued';
CREATE INDEX segments_leased ON segments (lease_expires_at) WHERE state = 'running';
CREATE INDEX segments_running_host ON segments (host) WHERE state = 'running';
CREATE INDEX segments_transfer ON segments (transfer_id);

-- One row per origin host: the claim locks it while it counts that host's running segments,
-- so the whole fleet never holds more than max_running against it. Host '*' holds the default.
CREATE TABLE origin_hosts (
    host         text PRIMARY KEY,
    max_running  integer CHECK (max_running IS NULL OR max_running > 0)  -- NULL: the '*' default
);
INSERT INTO origin_hosts (host, max_running) VALUES ('*', 8);

-- Parts layout: each attempt's part file and how many of its bytes were made durable.
CREATE TABLE segment_parts (
    segment_id  bigint NOT NULL REFERENCES segments(id) ON DELETE CASCADE,
    path        text NOT NULL,   -- relative to the storage root
    byte_offset bigint NOT NULL, -- where the part's first byte belongs in the file
    length      bigint NOT NULL, -- bytes checkpointed; a zombie's later bytes are never used
    PRIMARY KEY (segment_id, path)
);

CREATE TABLE workers (
    id            text PRIMARY KEY,
    host          text NOT NULL,
    pid           integer NOT NULL,
    roles         text NOT NULL,
    version       text NOT NULL,
    started_at    timestamptz NOT NULL DEFAULT now(),
    heartbeat_at  timestamptz NOT NULL DEFAULT now(),
    bytes_fetched bigint NOT NULL DEFAULT 0,            -- body bytes received since the worker started
    rate          double precision NOT NULL DEFAULT 0,  -- bytes per second between its last two heartbeats
    stopped_at    timestamptz
);

ALTER TABLE segments SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE transfers SET (autovacuum_vacuum_scale_factor = 0.05);
