-- Object storage (S3): a transfer planned by a worker whose storage is an S3 bucket is one
-- multipart upload. Its id is kept on the transfer until the upload is completed or aborted
-- (the housekeeper aborts those of canceled and failed transfers); each segment is one part,
-- whose ETag is recorded with the segment's completion, under its lease fence.
ALTER TABLE transfers DROP CONSTRAINT transfers_layout_check;
ALTER TABLE transfers ADD CONSTRAINT transfers_layout_check CHECK (layout IN ('inplace', 'parts', 's3'));
ALTER TABLE transfers ADD COLUMN object_upload_id text;
ALTER TABLE segments ADD COLUMN part_etag text;
CREATE INDEX transfers_object_uploads ON transfers (state) WHERE object_upload_id IS NOT NULL;
