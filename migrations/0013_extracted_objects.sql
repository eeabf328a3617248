-- Extraction on S3 storage: every object `--extract` writes is recorded here, under the
-- finalizing lease, before its first byte is sent. A failed extraction deletes the objects
-- listed and forgets them; a finalizer that takes over from a crashed one deletes what an
-- earlier attempt listed before starting over. After a success the rows stay as the record
-- of what was written (and are removed with the transfer).
CREATE TABLE extracted_objects (
    transfer_id bigint NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
    key text NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (transfer_id, key)
);
