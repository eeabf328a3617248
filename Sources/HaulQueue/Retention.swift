import HaulPostgres

/// Removes finished transfers after a retention so the hot tables stay small.
public enum Retention {
    /// How often a worker prunes for `retention` seconds: a quarter of the retention, between
    /// 10 seconds and 10 minutes, so a finished transfer outlives its retention by at most a
    /// quarter of it (7 days: every 10 minutes; 1 hour: every 10 minutes; 1 minute: every 15 s).
    public static func pruneInterval(retention: Double) -> Double {
        min(600, max(10, retention / 4))
    }

    /// The final states pruning removes.
    public static let prunableStates: [TransferState] = [.done, .failed, .canceled]

    /// Deletes transfers in `states` (final ones only) finished more than `seconds` ago (with their
    /// segments and history), batches left empty and workers silent as long. - Returns: how many transfers were deleted.
    @discardableResult
    public static func prune(_ db: PostgresConnection, olderThan seconds: Double, states: [TransferState] = prunableStates) throws -> Int {
        try db.transaction {
            // Neither the history (migration 0014) nor the segments (0015) reference their transfer:
            // they go in the same statement.
            let count =
                try db.query(
                    Statements.Retention.prune, [seconds, states.filter(\.isFinal).map(\.rawValue)]
                ).first?.int("n") ?? 0
            // Transfers do not reference their batch (migration 0018): wait for the enqueues that
            // hold a batch's row (they create or lock it before inserting its transfers), so that
            // the delete sees their transfers and keeps the batch; later enqueues wait for this commit.
            try db.query("LOCK TABLE batches IN SHARE ROW EXCLUSIVE MODE")
            try db.query(Statements.Retention.pruneBatches)
            // A live worker heartbeats every few seconds: keep registry rows an hour at least, so
            // `prune --older-than 0s` never removes a worker that is running.
            try db.query(Statements.Retention.pruneWorkers, [seconds])
            return count
        }
    }

    /// How many transfers `prune` would delete now, deleting nothing (`haul prune --dry-run`).
    public static func countPrunable(_ db: PostgresConnection, olderThan seconds: Double, states: [TransferState] = prunableStates) throws -> Int {
        try db.query(Statements.Retention.countPrunable, [seconds, states.filter(\.isFinal).map(\.rawValue)]).first?.int("n") ?? 0
    }

    /// How many canceled transfers old enough to prune are kept because a worker has not yet
    /// removed their partial data (a running worker does it within a few heartbeats).
    public static func countAwaitingCleanup(_ db: PostgresConnection, olderThan seconds: Double, states: [TransferState] = prunableStates) throws -> Int {
        try db.query(
            Statements.Retention.countAwaitingCleanup,
            [seconds, states.filter(\.isFinal).map(\.rawValue)]
        ).first?.int("n") ?? 0
    }

    /// Prunes if no other worker is doing it now (a transaction-scoped advisory lock, which
    /// works behind a transaction-mode pooler) and returns whether it ran.
    public static func pruneIfFree(_ db: PostgresConnection, olderThan seconds: Double) throws -> Bool {
        try db.transaction {
            guard try db.query("SELECT pg_try_advisory_xact_lock(7235842) AS got").first?.bool("got") == true else { return false }
            try prune(db, olderThan: seconds)
            return true
        }
    }
}
