-- Before an attempt on a mirrored transfer: puts its mirrors whose rest is over on trial
-- (haul_wake_mirrors, migration 0028) and reads the slowest rate of its other healthy mirrors,
-- against which this attempt is judged. $1 transfer id, $2 this attempt's mirror index.
-- Returns how many mirrors woke, and that rate (NULL: none known).
SELECT haul_wake_mirrors($1) AS woke,
       (SELECT min(rate) FROM transfer_mirrors WHERE transfer_id = $1 AND idx <> $2 AND state = 'healthy' AND rate > 0) AS peers
