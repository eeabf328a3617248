-- Event planningClaimed: the planner probes its transfer on a mirror of another host: the row
-- holds a slot of that host for the probe, moved from the host where it held one (a batch's
-- small file that was left pending, or gave its slot back, takes one), when that host has a
-- free slot. Both host rows (the mirror's, and coalesce(probe_host, host): where the row holds
-- its slot, if it holds one) are locked first, in name order, and the free slot is judged on the
-- locked row. (A row that holds no slot may keep a stale probe_host, migration 0032: locking
-- that host's row too is harmless.) Nothing is written when the host is full or
-- the lease was lost.
-- $1 transfer id, $2 lease token, $3 the mirror's host, $4 the default host limit.
WITH locked AS MATERIALIZED (
    SELECT h.host, h.busy, h.max_running FROM origin_hosts h
    WHERE h.host = $3
       OR h.host = (SELECT coalesce(probe_host, host) FROM transfers WHERE id = $1 AND lease_token = $2::uuid)
    ORDER BY h.host FOR UPDATE OF h),
room AS MATERIALIZED (
    SELECT 1 FROM locked l
    WHERE l.host = $3 AND l.busy < coalesce(l.max_running, (SELECT max_running FROM origin_hosts WHERE host = '*'), $4))
UPDATE transfers t SET state = CASE WHEN t.state = 'pending' THEN 'planning' ELSE t.state END, holds_slot = true,
       probe_host = nullif($3, t.host), updated_at = now()
WHERE t.id = $1 AND t.lease_token = $2::uuid AND EXISTS (SELECT 1 FROM room)
