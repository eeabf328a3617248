-- Marks a worker stopped (it shut down). $1 worker id.
UPDATE workers SET stopped_at = now() WHERE id = $1
