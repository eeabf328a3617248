-- Counts a failed attempt on its mirror and hands the segment to the next healthy mirror, its
-- progress cut back to a bad piece's start (haul_mirror_failed, migration 0028: proof demotes
-- the mirror for good; an error no retry mends, a third failure in a row or a failure on trial
-- rests it on the worker's backoff schedule).
-- $1 segment id, $2 transfer id, $3 mirror index, $4 proof that it serves other bytes (a bad
-- piece, another size), $5 rest it now (an error no retry mends), $6 the error, $7 bytes
-- received, $8 the bad piece's offset in the segment (bigint max: none), $9 the backoff's base
-- seconds, $10 its cap, $11 a jitter draw in [0, 1).
-- Returns whether the mirror was taken out of the rotation (demoted or resting).
SELECT haul_mirror_failed($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) AS out
