import HaulCore
import HaulPostgres

/// How transfers fail, start over, and are cleaned up: the planner's and finalizer's unhappy paths.
extension TransferLeases {
    /// Retries a transient planning or finalizing failure later, or fails the transfer after `maxAttempts`.
    public func postpone(_ claim: Claim, error: HaulError, retryAfter: Double, attempts: Int, maxAttempts: Int) throws {
        guard error.isTransient, attempts < maxAttempts else {
            try failTransfer(claim.info.id, code: error.code, message: (error.isTransient ? error.givenUp(after: attempts) : error).description)
            return
        }
        try db.query(
            Statements.TransferLeases.postpone, [claim.info.id, claim.leaseToken, error.description, error.code, retryAfter])
    }

    /// The finished file's digest did not match: fail the transfer, keeping its bytes and
    /// recording their digest (`computed`, when the finalizer kept them). A retry that expects
    /// that digest (the one expected was wrong: a get run again with the right `--checksum`)
    /// publishes them as they are; any other fetches them again (`TransferStore.apply`).
    public func failChecksum(_ claim: Claim, message: String, computed: String?) throws {
        let failed = try db.query(
            Statements.TransferLeases.failChecksum, [claim.info.id, claim.leaseToken, message, computed, HaulError.Code.checksumMismatch]
        ).affectedRows
        if failed == 1 { Self.logFailure(claim.info.id, code: .checksumMismatch, message: message) }
    }

    /// The one ERROR line a transfer's failure gets, written once its row says `failed`.
    static func logFailure(_ id: Int64, code: HaulError.Code, message: String) {
        Log.error("transfer failed", [("transfer", String(id)), ("code", code.rawValue), ("error", message)])
    }

    /// Some done segments' part files are gone from storage: queue those segments again from
    /// their first byte and move the transfer back to downloading, fenced by the finalizing lease.
    /// - Returns: `false` when the lease was lost (another finalizer decides).
    public func refetch(_ claim: Claim, segments indexes: [Int], reason: String) throws -> Bool {
        try db.transaction {
            let fenced = try db.query(
                Statements.TransferLeases.refetchTransfer, [claim.info.id, claim.leaseToken, reason]
            ).affectedRows
            guard fenced == 1 else { return false }
            try db.query(
                Statements.TransferLeases.forgetParts, [claim.info.id, claim.generation, indexes])
            try db.query(
                Statements.TransferLeases.refetchSegments, [claim.info.id, claim.generation, indexes, reason])
            try db.query("NOTIFY haul_work")
            return true
        }
    }

    /// Fails a transfer with a reason the operator will read in `haul status`.
    public func failTransfer(_ id: Int64, code: HaulError.Code, message: String) throws {
        let failed = try db.transaction { () -> Int in
            let count = try db.query(
                Statements.TransferLeases.failTransfer, [id, message, code]
            ).affectedRows
            try db.query(
                Statements.TransferLeases.failSegments,
                [id])
            if count == 1 { try db.query("NOTIFY \(TransferStore.finishedChannel)") }
            return count
        }
        if failed == 1 { Self.logFailure(id, code: code, message: message) }
    }

    /// A canceled transfer whose partial data is still on storage.
    public struct Cleanup: Sendable {
        public let id: Int64
        public let dest: String
        public let generation: Int
    }

    /// Takes up to `limit` canceled transfers whose partial data this worker may remove.
    public func claimCleanups(limit: Int) throws -> [Cleanup] {
        try db.query(
            Statements.TransferLeases.claimCleanups(owned: scope.owns("owner", worker: "$2")), [limit, workerID]
        ).rows.compactMap { row in
            guard let dest = row["dest"] else { return nil }
            return Cleanup(id: try row.int64("id"), dest: dest, generation: try row.int("generation"))
        }
    }

    /// Moves on transfers whose segments are all done but which are still `downloading`: the
    /// completion that should have moved them was lost in a database outage.
    /// - Returns: how many were moved to `finalizing`.
    public static func finishStuckDownloads(on db: PostgresConnection) throws -> Int {
        try db.query(
            Statements.TransferLeases.finishStuckDownloads
        ).affectedRows
    }

    /// Returns planning transfers whose planner vanished to pending.
    public static func rescueExpired(on db: PostgresConnection) throws -> Int {
        // One host per statement: each statement then locks one host row (its slot counter),
        // after its transfer rows, like every other release; see SegmentLeases.rescueExpired.
        // The rows are taken in id order and those another rescuer holds are skipped (it is
        // rescuing them): two workers rescuing one expired batch at once locked its rows in
        // different orders and deadlocked.
        var rescued = 0
        while true {
            let count = try db.query(
                Statements.TransferLeases.rescueExpiredPlanning
            ).affectedRows
            guard count > 0 else { return rescued }
            rescued += count
        }
    }
}
