import HaulPostgres

/// The cheap question an idle lane asks before its claim statements: is there anything a
/// worker could take? Each claim is a statement PostgreSQL must plan (every time behind a
/// transaction-mode pooler, where nothing stays prepared); this one reads four partial indexes
/// that are empty when the fleet is idle.
public enum WorkProbe {
    /// Whether a segment is queued or running (a straggler to split), or a transfer is pending
    /// (and not held by a batch claim) or finalizing, for any worker. `false` means every claim would find nothing now; `true`
    /// only that one might (the work may be another scope's, not yet due, or paused).
    public static func anythingToDo(_ db: PostgresConnection) throws -> Bool {
        try db.query(
            """
            SELECT EXISTS (SELECT 1 FROM segments WHERE state = 'queued')
                OR EXISTS (SELECT 1 FROM segments WHERE state = 'running')
                OR EXISTS (SELECT 1 FROM transfers WHERE state = 'pending' AND \(TransferLeases.unleasedSQL()))
                OR EXISTS (SELECT 1 FROM transfers WHERE state = 'finalizing') AS work
            """
        ).first?.bool("work") ?? true
    }
}
