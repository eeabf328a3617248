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

    /// Applies `action` to every transfer of batch `name` whose state allows it, through the
    /// bulk `apply(_:to:)` the CLI's `--batch` uses: one transaction, the same verdicts.
    ///
    /// - Throws: `no-such-batch`; `invalid-transition` when no transfer of the batch allows it.
    public func apply(_ action: OperatorAction, toBatch name: String) throws -> BatchOutcome {
        guard try batchExists(name) else {
            throw HaulError(.noSuchBatch, "there is no batch '\(name)'", hint: "'haul status --batch NAME' shows a batch's transfers")
        }
        let members = try select(state: nil, batch: name)
        let candidates = members.filter { action.verdict(transfer: $0.id, state: $0.state) == .apply }.map(\.id)
        guard !candidates.isEmpty else {
            let allowed = action.allowedFrom.map(\.rawValue).sorted().joined(separator: ", ")
            throw HaulError(
                .invalidTransition, "no transfer of batch '\(name)' can be \(action.pastTense)",
                hint: "it can \(action.rawValue) only transfers that are \(allowed)")
        }
        // Rows a worker moved on between the read and the locked update are refused there: skipped.
        let applied = try apply(action, to: candidates).changed.count
        return BatchOutcome(applied: applied, skipped: members.count - applied)
    }
}
