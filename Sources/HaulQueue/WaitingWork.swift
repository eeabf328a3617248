import HaulPostgres

/// The question a lane that has streamed one segment for its fairness budget asks with a
/// checkpoint (`FairShare`): does another origin's work (or a finished file to publish) wait
/// with no lane at all, while this segment's origin holds more than one?
public enum WaitingWork {
    /// Whether `segment`'s origin holds two slots or more across the fleet while a pending
    /// transfer or a queued segment of another origin, of no lower priority and due now in
    /// `scope`, waits on an origin that holds none and is not paused. Giving one lane to such
    /// an origin never starves the giver, so lanes settle instead of changing hands for ever:
    /// every origin with work keeps at least one, as long as there are lanes for that; within
    /// one origin, its limit and FIFO order rule. A transfer whose bytes are all in and that no
    /// finalizer holds waits too: it needs a lane, not a slot. Reads a few hundred candidates at most.
    public static func waitsBeside(_ segment: ClaimedSegment, on db: PostgresConnection, workerID: String, scope: WorkScope) throws -> Bool {
        let info = segment.transfer
        let statement = PipelinedStatement(
            """
            SELECT coalesce((SELECT busy FROM origin_hosts WHERE host = $3), 0) >= 2 AND (EXISTS (
                SELECT 1 FROM (
                    (SELECT t.host FROM transfers t
                     WHERE t.state = 'pending' AND t.next_attempt_at <= now() AND t.priority >= $4 AND t.host <> $3 AND \(scope.owns("t.owner", worker: "$1"))
                       AND \(TransferLeases.unleasedSQL("t."))
                     LIMIT 500)
                    UNION ALL
                    (SELECT s.host FROM segments s JOIN transfers t ON t.id = s.transfer_id AND t.state = 'downloading' AND t.generation = s.generation
                     WHERE s.state = 'queued' AND s.next_attempt_at <= now() AND s.priority >= $4 AND s.host <> $3 AND \(scope.owns("t.owner", worker: "$1"))
                     LIMIT 500)
                ) c
                JOIN origin_hosts h ON h.host = c.host LEFT JOIN origin_hosts d ON d.host = '*'
                WHERE h.busy = 0 AND coalesce(h.max_running, d.max_running, $2) > 0
            ) OR EXISTS (
                SELECT 1 FROM transfers t
                WHERE t.state = 'finalizing' AND t.next_attempt_at <= now() AND (t.lease_token IS NULL OR t.lease_expires_at < now())
                  AND \(scope.owns("t.owner", worker: "$1"))
            )) AS waits
            """, [workerID, HostLimits.fallbackDefault, info.host, info.priority], awaitDurableCommit: false, prepared: true, genericPlan: true)
        return try db.pipelined([statement])[0].first?.bool("waits") ?? false
    }
}
