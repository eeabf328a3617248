-- Counts a failed attempt on its mirror (haul_mirror_failed: demotes it when asked or at its third
-- failure) and hands the segment to the next healthy mirror, its progress cut back to a bad
-- piece's start. $1 segment id, $2 transfer id, $3 mirror index, $4 demote now, $5 the error,
-- $6 bytes received, $7 the bad piece's offset in the segment (bigint max: none).
-- Returns whether the mirror was demoted.
SELECT haul_mirror_failed($1, $2, $3, $4, $5, $6, $7) AS demoted
