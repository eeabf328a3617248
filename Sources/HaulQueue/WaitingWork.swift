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
            Statements.WaitingWork.waitsBeside(owned: scope.owns("t.owner", worker: "$1")), [workerID, HostLimits.fallbackDefault, info.host, info.priority],
            awaitDurableCommit: false, prepared: true, genericPlan: true)
        return try db.pipelined([statement])[0].first?.bool("waits") ?? false
    }
}
