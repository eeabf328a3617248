-- The storage a transfer's file is on, as the worker that planned it names its own:
-- file:///ROOT for a POSIX root, s3://BUCKET/PREFIX for a bucket (never a credential or an
-- endpoint). NULL until the transfer is first planned. Shown by `haul status` and the dashboard.
ALTER TABLE transfers ADD COLUMN storage text;
