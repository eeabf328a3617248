-- A finalizer records which generation's file it is about to rename into place before it does.
-- A later finalizer that finds the partial file gone trusts a file of the right size at the
-- destination as that earlier publish only when this says one was made: before, any file of the
-- right size there (another transfer's, or one put there by hand) was recorded as this
-- transfer's download.

ALTER TABLE transfers ADD COLUMN publishing_generation integer;
