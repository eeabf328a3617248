-- The queue's depth once a minute, for the dashboard's chart of it over the last hour: the
-- first worker heartbeat of each minute counts pending and downloading transfers and queued
-- segments (index scans of the claim's partial indexes); the other heartbeats of that minute
-- find the row and do nothing. Rows older than two hours are dropped by the same statement.

CREATE TABLE queue_samples (
    minute          timestamptz PRIMARY KEY,
    pending         bigint NOT NULL,
    downloading     bigint NOT NULL,
    segments_queued bigint NOT NULL
);

CREATE FUNCTION haul_sample_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM queue_samples WHERE minute = date_trunc('minute', now())) THEN
        INSERT INTO queue_samples (minute, pending, downloading, segments_queued)
        VALUES (date_trunc('minute', now()),
                (SELECT count(*) FROM transfers WHERE state = 'pending'),
                (SELECT count(*) FROM transfers WHERE state = 'downloading'),
                (SELECT count(*) FROM segments WHERE state = 'queued'))
        ON CONFLICT (minute) DO NOTHING;
        DELETE FROM queue_samples WHERE minute < now() - interval '2 hours';
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER workers_queue_sample AFTER UPDATE OF heartbeat_at ON workers
    FOR EACH ROW EXECUTE FUNCTION haul_sample_queue();
