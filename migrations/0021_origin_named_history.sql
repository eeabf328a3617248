-- Earlier versions of a file the origin names: a fleet transfer enqueued without --dest has no
-- destination before its probe, so its conditional probe (incremental re-mirror) looks up the
-- newest done transfer of its URL that the origin named (`previousNamedByOrigin`) by URL alone.
-- transfers_previous leads with the destination and cannot serve that; this index holds only
-- the done transfers the origin named (a get's are found through transfers_local_target).

CREATE INDEX transfers_named_by_origin ON transfers (url) WHERE state = 'done' AND options @> '{"named_by_origin": true}';
