-- What the operator dashboard draws that the other tables forget: bytes per minute per worker
-- (the throughput chart) and each transfer's changes of state (its history).

-- Bytes each worker received per minute, written by the worker's heartbeat: every update of
-- workers.bytes_fetched adds the increase to the current minute's row. Rows older than two
-- hours are dropped by the same worker's next heartbeat.
CREATE TABLE worker_throughput (
    worker_id text NOT NULL,
    minute    timestamptz NOT NULL,
    bytes     bigint NOT NULL,
    PRIMARY KEY (worker_id, minute)
);
CREATE INDEX worker_throughput_minute ON worker_throughput (minute);

CREATE FUNCTION haul_record_throughput() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO worker_throughput (worker_id, minute, bytes)
    VALUES (NEW.id, date_trunc('minute', now()), NEW.bytes_fetched - OLD.bytes_fetched)
    ON CONFLICT (worker_id, minute) DO UPDATE SET bytes = worker_throughput.bytes + excluded.bytes;
    DELETE FROM worker_throughput WHERE worker_id = NEW.id AND minute < now() - interval '2 hours';
    RETURN NULL;
END $$;

CREATE TRIGGER workers_throughput AFTER UPDATE OF bytes_fetched ON workers
    FOR EACH ROW WHEN (NEW.bytes_fetched > OLD.bytes_fetched) EXECUTE FUNCTION haul_record_throughput();

-- Every change of a transfer's state, one row per change (statement-level, so a bulk update
-- writes its history in one INSERT). The first row of a transfer's history is its creation.
CREATE TABLE transfer_events (
    id          bigserial PRIMARY KEY,
    transfer_id bigint NOT NULL REFERENCES transfers(id) ON DELETE CASCADE,
    at          timestamptz NOT NULL DEFAULT now(),
    from_state  text NOT NULL,
    to_state    text NOT NULL,
    error       text
);
CREATE INDEX transfer_events_transfer ON transfer_events (transfer_id, id);

CREATE FUNCTION haul_record_transfer_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO transfer_events (transfer_id, from_state, to_state, error)
    SELECT n.id, o.state, n.state, n.error FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.state IS DISTINCT FROM o.state;
    RETURN NULL;
END $$;

CREATE TRIGGER transfers_history AFTER UPDATE ON transfers
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION haul_record_transfer_events();
