import HaulPostgres

/// Removes finished transfers after a retention so the hot tables stay small.
public enum Retention {
    /// Deletes done, failed and canceled transfers finished more than `seconds` ago (segments
    /// cascade) and batches left empty. - Returns: how many transfers were deleted.
    @discardableResult
    public static func prune(_ db: PostgresConnection, olderThan seconds: Double) throws -> Int {
        try db.transaction {
            let count = try db.query(
                "DELETE FROM transfers WHERE state IN ('done','failed','canceled') AND NOT cleanup_pending AND finished_at < now() - make_interval(secs => $1)",
                [seconds]
            ).affectedRows
            try db.query("DELETE FROM batches b WHERE NOT EXISTS (SELECT 1 FROM transfers t WHERE t.batch_id = b.id)")
            try db.query("DELETE FROM workers WHERE coalesce(stopped_at, heartbeat_at) < now() - make_interval(secs => $1)", [seconds])
            return count
        }
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
