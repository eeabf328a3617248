import HaulCore
import HaulPostgres

/// How a transfer whose downloaded bytes cannot be used starts over as a new generation, once:
/// the origin's file changed, or the bytes are gone from storage.
extension TransferLeases {
    /// The lease under which a worker reports that a transfer must start over. Only a worker that
    /// still holds it may restart or fail the transfer: a worker that was frozen past its lease
    /// and wakes to find the multipart upload completed, or the partial file published, by the
    /// worker that took over, reports nothing true about the transfer any more.
    public struct Reporter: Sendable {
        let transferID: Int64
        let generation: Int
        /// What runs the transfer again (`TransferInfo.retryCommand`).
        let retryCommand: String
        /// SQL on the `transfers` row that holds while the lease does, with its parameters from `$5`.
        let fence: String
        let fenceParameters: [any PostgresBindable]

        /// The worker that streams `segment`.
        public static func segment(_ segment: ClaimedSegment) -> Reporter {
            Reporter(
                transferID: segment.transferID, generation: segment.generation, retryCommand: segment.transfer.retryCommand,
                fence: "EXISTS (SELECT 1 FROM segments s WHERE s.id = $5 AND s.lease_token = $6::uuid AND s.state = 'running')",
                fenceParameters: [segment.id, segment.leaseToken])
        }

        /// The worker that finalizes `claim`.
        public static func finalizer(_ claim: Claim) -> Reporter {
            Reporter(
                transferID: claim.info.id, generation: claim.generation, retryCommand: claim.info.retryCommand,
                fence: "lease_token = $5::uuid", fenceParameters: [claim.leaseToken])
        }
    }

    /// What `originChanged` and `downloadLost` did to the transfer.
    public enum StartOver: Sendable, Equatable {
        /// It starts over as a new generation.
        case restarted
        /// It had started over once already: it failed.
        case failed
        /// The reporter no longer holds its lease (another worker has the work, or the transfer
        /// started over or finished meanwhile): nothing changed.
        case fenced
    }

    /// The origin's file changed under a download: start over once with the new version,
    /// then fail. Never mixes bytes of two versions: old segments are abandoned with their generation.
    @discardableResult
    public func originChanged(by reporter: Reporter, reason: String) throws -> StartOver {
        try startOver(
            reporter, code: .originChanged, note: "origin changed",
            startedOver: "origin changed while downloading, started over: \(reason)",
            failed: "origin changed while downloading (\(reason)); run \(reporter.retryCommand) to start over")
    }

    /// The bytes a transfer downloaded so far are gone from storage: its partial file (removed by
    /// hand, or taken by a later transfer to the same destination while this one had failed), or
    /// its S3 multipart upload (aborted by a lifecycle rule or by hand). It starts over once,
    /// then fails with `code`; `haul retry` starts it over again.
    /// - Parameter reason: what was found, as `the partial file … is gone`.
    @discardableResult
    public func downloadLost(by reporter: Reporter, code: HaulError.Code, reason: String) throws -> StartOver {
        try startOver(
            reporter, code: code, note: "downloaded bytes gone",
            startedOver: "\(reason), started over", failed: "\(reason) again; run \(reporter.retryCommand) to start over")
    }

    /// Starts the reporter's generation of its transfer over as a new generation, once
    /// (`restarts` counts it); a second time the transfer fails with `code` and `failed`. Its
    /// unfinished segments are abandoned with their generation. Nothing changes unless the
    /// reporter still holds its lease: a late report from an older generation, or from a worker
    /// fenced off, touches nothing.
    private func startOver(_ reporter: Reporter, code: HaulError.Code, note: String, startedOver: String, failed message: String) throws -> StartOver {
        let id = reporter.transferID
        let outcome = try db.transaction { () -> StartOver in
            let restarted =
                try db.query(
                    Statements.TransferLeases.startOverTransfer(fence: reporter.fence), [id, reporter.generation, startedOver, code] + reporter.fenceParameters
                ).affectedRows == 1
            if restarted {
                try db.query(
                    Statements.TransferLeases.abandonSegments,
                    [id, reporter.generation, note])
                try db.query("NOTIFY haul_work")
                return .restarted
            }
            let failed = try db.query(
                Statements.TransferLeases.failStartedOver(fence: reporter.fence), [id, reporter.generation, message, code] + reporter.fenceParameters
            ).affectedRows
            guard failed == 1 else { return .fenced }
            try db.query(
                Statements.TransferLeases.failGeneration,
                [id, reporter.generation])
            return .failed
        }
        if outcome == .failed { Self.logFailure(id, code: code, message: message) }
        return outcome
    }
}
