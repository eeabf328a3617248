-- Of transfers $1 (bigint[]), the canceled gets' whose partial data waits to be removed: each
-- one's id, dest, generation and local target. One statement for any number of transfers (a
-- batch's cancel of 10 000 must not pay a round trip each).
SELECT id, dest, generation, options->>'local_target' AS target FROM transfers
WHERE id = ANY($1::bigint[]) AND {{TransferStore.uncleanedLocal}}
