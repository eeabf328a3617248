-- Before a planner asks the store to open a multipart upload it records the bucket and key
-- here, and deletes the row once the upload's id is recorded on the transfer. A planner killed
-- between the two leaves the row: the housekeeper's sweep then aborts an upload it finds open
-- at exactly that key, begun within minutes of the row, and no other (an upload another host,
-- fleet or tool opened under the same prefix is never Haul's to abort). Rows outlive no sweep
-- by more than the grace period.
CREATE TABLE object_upload_intents (
    id bigserial PRIMARY KEY,
    bucket text NOT NULL,
    key text NOT NULL,
    intended_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX object_upload_intents_key ON object_upload_intents (bucket, key);
