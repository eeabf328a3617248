import HaulPostgres

/// The question a lane that has streamed one segment for its fairness budget asks with a
/// checkpoint (`FairShare`): does work of another transfer wait for a lane that yielding this
/// one would let it take?
public enum WaitingWork {
    /// Whether a pending transfer, or a queued segment of a transfer with no segment running,
    /// other than `segment`'s transfer and of no lower priority, is due now in `scope` and its
    /// origin has a free slot, or would have one once this segment's slot is given back (the
    /// same origin, not paused). Reads a few hundred candidates at most.
    public static func waitsBeside(_ segment: ClaimedSegment, on db: PostgresConnection, workerID: String, scope: WorkScope) throws -> Bool {
        let info = segment.transfer
        let statement = PipelinedStatement(
            """
            SELECT EXISTS (
                SELECT 1 FROM (
                    (SELECT t.host FROM transfers t
                     WHERE t.state = 'pending' AND t.next_attempt_at <= now() AND t.priority >= $5 AND t.id <> $1 AND \(scope.owns("t.owner", worker: "$2"))
                     LIMIT 500)
                    UNION ALL
                    (SELECT s.host FROM segments s JOIN transfers t ON t.id = s.transfer_id AND t.state = 'downloading' AND t.generation = s.generation
                     WHERE s.state = 'queued' AND s.next_attempt_at <= now() AND s.priority >= $5 AND s.transfer_id <> $1
                       AND \(scope.owns("t.owner", worker: "$2"))
                       AND NOT EXISTS (SELECT 1 FROM segments r WHERE r.transfer_id = s.transfer_id AND r.state = 'running')
                     LIMIT 500)
                ) c
                JOIN origin_hosts h ON h.host = c.host LEFT JOIN origin_hosts d ON d.host = '*'
                WHERE h.busy - CASE WHEN c.host = $4 THEN 1 ELSE 0 END < coalesce(h.max_running, d.max_running, $3)
            ) AS waits
            """, [segment.transferID, workerID, HostLimits.fallbackDefault, info.host, info.priority], awaitDurableCommit: false, prepared: true,
            genericPlan: true)
        return try db.pipelined([statement])[0].first?.bool("waits") ?? false
    }
}
