-- An extraction entry longer than one part is a multipart upload, which may stay open for hours
-- (a very large entry): its upload id is recorded with the entry's key while it is open, so that
-- the housekeeper's sweep of uploads no transfer owns (HAUL_S3_ORPHAN_GRACE, default an hour)
-- leaves it alone, and a finalizer taking over from a crashed one aborts it. Cleared once the
-- upload is completed or aborted.
ALTER TABLE extracted_objects ADD COLUMN upload_id text;
