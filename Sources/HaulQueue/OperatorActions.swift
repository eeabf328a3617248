import HaulCore
import HaulPostgres

/// What one operator action did to each transfer it named.
public struct ActionOutcome: Sendable {
    /// Transfers the action changed.
    public var changed: [Int64] = []
    /// Transfers already where the action leads (pausing a paused transfer): nothing to do.
    public var unchanged: [Int64] = []
    /// Transfers whose state does not allow the action, with the reason.
    public var refused: [(id: Int64, error: HaulError)] = []
    /// Ids with no transfer.
    public var missing: [Int64] = []
}

extension TransferStore {
    /// Applies an operator action to one transfer: no-op when it is already there, an
    /// `invalid-transition` or `no-such-transfer` error when its state does not allow it.
    public func apply(_ action: OperatorAction, to id: Int64) throws {
        let outcome = try apply(action, to: [id])
        if let refusal = outcome.refused.first { throw refusal.error }
        if !outcome.missing.isEmpty {
            throw HaulError(.noSuchTransfer, "there is no transfer \(id)", hint: "'haul list' shows the transfers there are")
        }
    }

    /// Applies an operator action to many transfers in one transaction: the rows are locked,
    /// each is judged by `OperatorAction.verdict`, and those allowed change in a few set-wise
    /// statements, so a batch of 100 000 costs the same handful of round trips as one.
    /// - Parameter replacingExisting: `retry --force`: the fleet transfers retried replace
    ///   whatever is at their destinations from now on, also a file Haul did not write.
    /// - Parameter expecting: `retry --checksum`: the digest the retried transfers' files must
    ///   have from now on (bytes that failed the old one and have it are kept).
    public func apply(
        _ action: OperatorAction, to ids: [Int64], replacingExisting: Bool = false, expecting checksum: Checksum? = nil
    ) throws -> ActionOutcome {
        do {
            return try applyLocked(action, to: ids, replacingExisting: replacingExisting, expecting: checksum)
        } catch let error as PostgresError where error.isLockTimeout {
            throw Self.locked(action, ids)
        }
    }

    /// How long an operator action waits for a row another session holds locked. Haul's own
    /// transactions hold rows for milliseconds; one that holds them longer is a process frozen
    /// inside its transaction (`SIGSTOP`, a paused VM), which the server ends only after
    /// `PostgresConnection.idleTransactionTimeout`. The operator hears so at once.
    static let lockWait = "5s"

    /// The refusal of an action whose rows stayed locked past `lockWait`: nothing was changed.
    static func locked(_ action: OperatorAction, _ ids: [Int64]) -> HaulError {
        let what = ids.count == 1 ? "transfer \(ids[0]) is" : "some of these \(ids.count) transfers are"
        return HaulError(
            .conflict,
            "\(what) locked by another database session that has not let go for \(lockWait)"
                + " (a process paused or frozen inside a transaction?); nothing was changed",
            hint: "\(action.rawValue) again in a minute: PostgreSQL ends such a session of haul after \(PostgresConnection.idleTransactionTimeout);"
                + " 'haul workers' shows a worker that stopped heartbeating")
    }

    /// `apply`, its rows locked, waiting at most `lockWait` for each.
    private func applyLocked(_ action: OperatorAction, to ids: [Int64], replacingExisting: Bool, expecting checksum: Checksum?) throws -> ActionOutcome {
        var outcome = ActionOutcome()
        try db.transaction {
            try db.query("SET LOCAL lock_timeout = '\(Self.lockWait)'")
            let rows = try db.query(
                Statements.OperatorActions.lockRows, [ids]
            ).rows
            var found: Set<Int64> = []
            var restart: [Int64] = []
            let shared = action == .retry ? try partialsWrittenByOthers(among: ids) : []
            let busy = action == .retry ? try busyDestinations(retrying: ids) : [:]
            for row in rows {
                let id = try row.int64("id")
                found.insert(id)
                let state = TransferState(rawValue: try row.string("state")) ?? .failed
                switch action.verdict(transfer: id, state: state) {
                case .apply:
                    // Not under the enqueue lock: an operator's retry racing an enqueue of the same destination is left to them.
                    if let busy = busy[id] {
                        outcome.refused.append((id, busy))
                        continue
                    }
                    outcome.changed.append(id)
                    // Canceled: its partial data is (being) removed. Origin changed: its bytes are of an older
                    // version. Partial file gone: its bytes are lost. S3: its multipart upload is (being)
                    // aborted. Partial file written by another transfer since: its bytes may be the
                    // other's. Each starts over as a new generation, unless nothing was ever written for
                    // it (canceled before it started): then it stays one that never started, whose next
                    // cancel is final at once.
                    let nothingWritten = try row.bool("nothing_written")
                    let startsOver =
                        (state == .canceled && !nothingWritten) || Self.restartCodes.contains(row["error_code"] ?? "")
                        || row["layout"] == StorageLayout.s3.rawValue || shared.contains(id)
                    if action == .retry && startsOver { restart.append(id) }
                case .alreadyDone: outcome.unchanged.append(id)
                case .refuse(let error): outcome.refused.append((id, error))
                }
            }
            outcome.missing = ids.filter { !found.contains($0) }
            let restartSet = Set(restart)
            if action == .retry, let checksum, !outcome.changed.isEmpty {
                try db.query(Statements.OperatorActions.expectDigest, [outcome.changed, checksum.description])
            }
            try write(action, ids: outcome.changed.filter { !restartSet.contains($0) }, restart: restart)
            if action == .retry && replacingExisting && !outcome.changed.isEmpty {
                try db.query(
                    Statements.OperatorActions.replaceExisting,
                    [outcome.changed])
            }
        }
        if !outcome.changed.isEmpty {
            try db.query("NOTIFY haul_work")
            if action == .cancel { try db.query("NOTIFY \(TransferStore.finishedChannel)") }
        }
        return outcome
    }

    /// The failures whose transfer `retry` starts over rather than resumes: its bytes are of an
    /// older version, or gone.
    static let restartCodes: Set<String> = ["origin-changed", "partial-missing", "s3-no-upload", "s3-upload-lost"]

    /// Of the retried `ids`, the files that failed their checksum are fetched again from their
    /// first byte (every segment queued anew, part files forgotten), unless the digest expected
    /// now is the one their bytes have (`failChecksum` recorded it): the expected one was wrong,
    /// and the finalizer verifies and publishes the bytes kept. Before the retry clears the error.
    private func refetchMismatched(_ ids: [Int64]) throws {
        try db.query(
            Statements.OperatorActions.refetchMismatched, [ids])
    }

    /// The UPDATEs of an action on rows already locked and judged allowed.
    private func write(_ action: OperatorAction, ids: [Int64], restart: [Int64]) throws {
        switch action {
        case .cancel:
            guard !ids.isEmpty else { return }
            try db.query(
                Statements.OperatorActions.cancel,
                [ids])
            try db.query(
                Statements.OperatorActions.cancelSegments,
                [ids])
        case .retry:
            if !restart.isEmpty { try startOver(restart) }
            guard !ids.isEmpty else { return }
            try refetchMismatched(ids)
            try db.query(
                Statements.OperatorActions.retry, [ids])
            try db.query(
                Statements.OperatorActions.retrySegments, [ids])
        case .pause:
            guard !ids.isEmpty else { return }
            try db.query(Statements.OperatorActions.pause, [ids])
        case .resume:
            guard !ids.isEmpty else { return }
            try db.query(
                Statements.OperatorActions.resume,
                [ids])
        }
    }
}
