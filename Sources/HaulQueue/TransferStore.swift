import HaulCore
import HaulPostgres

/// The admin side of the queue: enqueue, inspect and steer transfers. Never talks to origins.
public struct TransferStore {
    let db: PostgresConnection

    /// Works through `connection`, which the caller owns.
    public init(_ connection: PostgresConnection) {
        self.db = connection
    }

    /// The channel notified (at the commit) when transfers reach a final state: a batch of small
    /// files recorded done, a file finalized or failed, transfers canceled. `haul wait` listens
    /// on it rather than polling often; a final state reached by any other path is seen at its
    /// next poll.
    public static let finishedChannel = "haul_finished"

    /// Inserts a pending transfer and wakes idle workers (not for a transfer a `haul get` owns:
    /// its own worker alone takes it on, and it does not listen).
    /// - Returns: the new transfer's id.
    /// - Throws: `destination-busy` when an active transfer (not a `haul get`) already targets `request.dest`.
    public func enqueue(_ request: NewTransfer) throws -> Int64 {
        let host = OriginURL.hostKey(request.url)
        let row = try db.transaction {
            if let dest = request.dest, request.owner == nil {
                try Self.lockDestinations(db)
                try Self.refuseBusy(dest, db)
            }
            try db.query(Statements.TransferLeases.addOriginHost, [host])
            let row = try db.query(
                Statements.TransferStore.enqueue,
                [
                    request.url, request.dest, request.segmentSize, request.checksum?.description, request.priority, request.layout.rawValue,
                    Header.json(request.headers), request.options.json, request.batchID, request.owner, host,
                ]
            ).first
            if let row { try Self.recordMirrors(try row.int64("id"), request, db) }
            return row
        }
        // A transfer a `haul get` owns is work for its own worker alone, which does not listen.
        if request.owner == nil { try db.query("NOTIFY haul_work") }
        return try row!.int64("id")
    }

    /// Hands a transfer to a new owner (a rerun of `haul get` adopting its earlier, unfinished transfer).
    public func adopt(_ id: Int64, owner: String) throws {
        try db.query(Statements.TransferStore.adopt, [id, owner])
        try db.query(Statements.TransferStore.adoptSegments, [id])
    }

    /// One transfer with its progress, or `nil` if there is none with that id.
    public func status(_ id: Int64) throws -> TransferStatus? {
        try db.query(Statements.TransferStore.status, [id]).first.map(TransferStatus.init)
    }

    /// `status(_:)` of many transfers in one query, in the order of `ids`; ids with no
    /// transfer are left out.
    public func statuses(_ ids: [Int64]) throws -> [TransferStatus] {
        guard !ids.isEmpty else { return [] }
        let found = try db.query(Statements.TransferStore.statuses, [ids]).rows.map(TransferStatus.init)
        let byID = Dictionary(uniqueKeysWithValues: found.map { ($0.id, $0) })
        return ids.compactMap { byID[$0] }
    }

    /// What a progress line sums of each of `ids`, in no order; ids with no transfer are left
    /// out. A long list's line reads this of its open transfers, and whole statuses only of the
    /// few it shows (`statuses`).
    public func progress(_ ids: [Int64]) throws -> [TransferProgress] {
        guard !ids.isEmpty else { return [] }
        return try db.query(Statements.TransferStore.progress, [ids]).rows.map(TransferProgress.init)
    }

    /// Those of `ids` whose transfers are not final yet (done, failed, canceled), in no order;
    /// ids with no transfer are left out. Index lookups only: cheap to ask often of a long list.
    public func unsettled(_ ids: [Int64]) throws -> [Int64] {
        guard !ids.isEmpty else { return [] }
        return try db.query(Statements.TransferStore.unsettled, [ids])
            .rows.map { try $0.int64("id") }
    }

    /// Transfers, newest first, optionally only those in `state`, of batch `batch` and of origin
    /// host `host` (a host key: what an operator typed goes through `HostLimits.parse`).
    public func list(state: TransferState?, batch: String? = nil, host: String? = nil, limit: Int = 1000) throws -> [TransferStatus] {
        try db.query(
            Statements.TransferStore.list, [state?.rawValue, batch, host, limit]
        ).rows.map(TransferStatus.init)
    }

    /// The ids of the transfers in `state` and/or of batch `batch` and/or of host key `host`,
    /// oldest first (what a bulk `cancel --state failed` or `retry --batch NAME` acts on).
    public func select(state: TransferState?, batch: String?, host: String? = nil) throws -> [(id: Int64, state: TransferState)] {
        try db.query(Statements.TransferStore.select, [state?.rawValue, batch, host])
            .rows.map { (try $0.int64("id"), TransferState(rawValue: try $0.string("state")) ?? .failed) }
    }

    /// Whether a batch of this name exists.
    public func batchExists(_ name: String) throws -> Bool {
        try db.query(Statements.TransferStore.batchExists, [name]).first != nil
    }

    /// The state of each segment of the transfer's current generation, in file order.
    public func segmentStates(_ id: Int64) throws -> [SegmentState] {
        try db.query(
            Statements.TransferStore.segmentStates,
            [id]
        ).rows.compactMap { SegmentState(rawValue: try $0.string("state")) }
    }
}
