-- Takes the clean-up of a canceled get's transfer (its cleanup_pending), for the get's own
-- process. $1 transfer id. Returns dest, generation and local target; no row when there is none.
UPDATE transfers SET cleanup_pending = false WHERE id = $1 AND {{TransferStore.uncleanedLocal}}
RETURNING dest, generation, options->>'local_target' AS target
