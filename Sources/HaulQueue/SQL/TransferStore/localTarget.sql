-- The local target of a get's transfer (NULL for a fleet transfer). $1 transfer id.
SELECT options->>'local_target' AS target FROM transfers WHERE id = $1
