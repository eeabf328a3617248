-- Adds an attempt's bytes to its mirror's count with the attempt's rate; a mirror on trial is
-- healthy again (haul_mirror_served, migration 0028).
-- $1 transfer id, $2 mirror index, $3 bytes, $4 bytes per second (NULL: too short to tell).
SELECT haul_mirror_served($1, $2, $3, $4)
