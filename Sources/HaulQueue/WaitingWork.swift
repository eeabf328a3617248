import HaulPostgres

/// The question a lane that has streamed one segment for its fairness budget asks with a
/// checkpoint (`FairShare`): does other work wait with no lane at all, while this segment's
/// origin (or transfer) holds more than one?
public enum WaitingWork {
    /// Whether other work waits for the lane of `segment`, due now in `scope`:
    /// - a pending transfer or a queued segment of another origin, of no lower priority, on an
    ///   origin that holds no slot and is not paused, while `segment`'s origin holds two slots or
    ///   more across the fleet;
    /// - another transfer of `segment`'s own origin that has no lane, of no lower priority (a new
    ///   one, pending, the origin not paused; or a downloading one with a queued segment there and
    ///   none running), while `segment`'s transfer holds two lanes or more on it: the queue's
    ///   order puts the older transfer's queued segments first, so without this a batch of small
    ///   files, or a second big file, of the same site waited for a big download to be fetched whole;
    /// - a transfer whose bytes are all in and that no finalizer holds: it needs a lane, not a slot.
    ///
    /// Giving one lane away never starves the giver, so lanes settle instead of changing hands
    /// for ever: every origin with work keeps at least one lane while there are lanes for that,
    /// and within an origin every transfer with work keeps one while its origin's limit and the
    /// lanes allow. Reads a few hundred candidates at most, and the fleet's running segments.
    public static func waitsBeside(_ segment: ClaimedSegment, on db: PostgresConnection, workerID: String, scope: WorkScope) throws -> Bool {
        let info = segment.transfer
        let statement = PipelinedStatement(
            Statements.WaitingWork.waitsBeside(owned: scope.owns("t.owner", worker: "$1")),
            [workerID, HostLimits.fallbackDefault, info.host, info.priority, info.id],
            awaitDurableCommit: false, prepared: true, genericPlan: true)
        return try db.pipelined([statement])[0].first?.bool("waits") ?? false
    }
}
