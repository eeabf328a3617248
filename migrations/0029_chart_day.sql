-- The dashboard's charts can look back 24 hours (`?window=24h`): the bytes per minute per
-- worker and the queue's samples are kept 24 hours instead of two (at most 1 440 rows per
-- worker, and 1 440 samples). The same heartbeat statements drop what is older.

CREATE OR REPLACE FUNCTION haul_record_throughput() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO worker_throughput (worker_id, minute, bytes)
    VALUES (NEW.id, date_trunc('minute', now()), NEW.bytes_fetched - OLD.bytes_fetched)
    ON CONFLICT (worker_id, minute) DO UPDATE SET bytes = worker_throughput.bytes + excluded.bytes;
    DELETE FROM worker_throughput WHERE worker_id = NEW.id AND minute < now() - interval '24 hours';
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION haul_sample_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM queue_samples WHERE minute = date_trunc('minute', now())) THEN
        INSERT INTO queue_samples (minute, pending, downloading, segments_queued)
        VALUES (date_trunc('minute', now()),
                (SELECT count(*) FROM transfers WHERE state = 'pending'),
                (SELECT count(*) FROM transfers WHERE state = 'downloading'),
                (SELECT count(*) FROM segments WHERE state = 'queued'))
        ON CONFLICT (minute) DO NOTHING;
        DELETE FROM queue_samples WHERE minute < now() - interval '24 hours';
    END IF;
    RETURN NULL;
END $$;
