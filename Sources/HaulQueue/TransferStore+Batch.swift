import HaulCore
import HaulPostgres

extension TransferStore {
    /// What a batch-wide operator action did.
    public struct BatchOutcome: Sendable, Equatable {
        /// Transfers the action was applied to.
        public let applied: Int
        /// Transfers whose state did not allow it (left alone).
        public let skipped: Int
    }

    /// Applies `action` to every transfer of batch `name` whose state allows it, one transfer at
    /// a time through `apply(_:to:)` (the same guards and effects as the single-transfer action).
    ///
    /// - Throws: `no-such-batch`; `invalid-transition` when no transfer of the batch allows it.
    public func apply(_ action: OperatorAction, toBatch name: String) throws -> BatchOutcome {
        guard let batch = try db.query("SELECT id FROM batches WHERE name = $1", [name]).first else {
            throw HaulError(.noSuchBatch, "there is no batch '\(name)'", hint: "'haul status --batch NAME' shows a batch's transfers")
        }
        let rows = try db.query("SELECT id, state FROM transfers WHERE batch_id = $1 ORDER BY id", [try batch.int64("id")]).rows
        let candidates = try rows.compactMap { row -> Int64? in
            guard let state = TransferState(rawValue: try row.string("state")), action.allowedFrom.contains(state) else { return nil }
            return try row.int64("id")
        }
        guard !candidates.isEmpty else {
            let allowed = action.allowedFrom.map(\.rawValue).sorted().joined(separator: ", ")
            throw HaulError(
                .invalidTransition, "no transfer of batch '\(name)' can be \(action.pastTense)",
                hint: "it can \(action.rawValue) only transfers that are \(allowed)")
        }
        var applied = 0
        for id in candidates {
            do {
                try apply(action, to: id)
                applied += 1
            } catch let error as HaulError where error.code == .invalidTransition || error.code == .conflict {
                // A worker moved it on meanwhile: skipped, as a transfer that was never allowed.
            }
        }
        return BatchOutcome(applied: applied, skipped: rows.count - applied)
    }
}
