-- A canceled get's transfer whose partial data waits to be removed: its dest, generation and local
-- target. $1 transfer id.
SELECT dest, generation, options->>'local_target' AS target FROM transfers WHERE {{TransferStore.uncleanedLocal}}
