-- Fragment for insertEntries' {{skipExisting}}: an entry the batch holds already (same URL and
-- destination) is skipped.
ON CONFLICT (batch_id, url, dest) WHERE batch_id IS NOT NULL DO NOTHING
