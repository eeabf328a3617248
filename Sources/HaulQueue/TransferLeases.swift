import HaulCore
import HaulPostgres

/// The planner's and finalizer's side of the protocol: leases on whole transfer rows.
public struct TransferLeases {
    let db: PostgresConnection
    let workerID: String
    /// The transfers this worker plans, finalizes and cleans up.
    let scope: WorkScope
    /// The worker's storage identity: a transfer planned on another storage is not its to
    /// finalize (`claimFinalizing`). `nil`: any.
    let storage: String?

    /// Works through `connection` on behalf of worker `workerID`, on the transfers of `scope`
    /// (and of `storage`, when given).
    public init(_ connection: PostgresConnection, workerID: String, scope: WorkScope = .fleet, storage: String? = nil) {
        self.db = connection
        self.workerID = workerID
        self.scope = scope
        self.storage = storage
    }

    /// A transfer held by this worker under a lease on its row.
    public struct Claim: Sendable {
        public let info: TransferInfo
        public let leaseToken: String
        public let generation: Int
        /// Claims of this transfer so far, this one included.
        public let attempts: Int
        /// A planning claim whose row holds one of its host's slots (`holds_slot`): a probe may
        /// open a connection for it alone. The other rows of a batch share its slot holders'.
        public var holdsSlot = false
    }

    private static let returning = Statements.TransferLeases.returning

    /// Moves up to `limit` pending transfers of one origin host to `planning` (only a share of
    /// them when they all fit in one batch: see `share`), for probes that open at most
    /// `connections` connections at once (a probe is a connection to the origin like any running
    /// segment; see `HostLimits`). It takes no more of the host's free slots than that: only that
    /// many of the rows hold one.
    ///
    /// Two short statements rather than one long one. The first (`slotClaim`) locks the host's
    /// row, takes the rows that hold its slots and counts the host's pending transfers. It never
    /// waits for the host's row: when another claimer holds it, it takes nothing and says so
    /// (`PlanningBatch.hostContended`), and the lane looks again shortly (`IdlePolling`). A
    /// fleet's idle lanes had waited there in a queue (59 sessions of 16 workers at `-x 4`),
    /// each taking the row in turn to find the host full, and every slot given back and every
    /// segment completed (their counters are on that row) waited behind them. The second
    /// (`restClaim`) takes the rest of the batch, rows that hold no slot, without the host's
    /// lock. Moving a thousand rows takes tens of milliseconds, and while one statement did it
    /// under the host's lock, every other claimer of the host and every slot given back
    /// (`releaseSlots`) waited for it: the connections a batch had just freed stood idle.
    /// A failure between the two leaves a batch of the slot rows alone, or rows whose leases
    /// run out and are rescued, as for any claim whose reply is lost.
    public func claimPlanning(lease: Double, limit: Int, connections: Int, idleHostsFrom: Int? = nil) throws -> PlanningBatch {
        let sql = Self.slotClaim(limit: limit, scope: scope, idleHosts: idleHostsFrom != nil)
        let idle: [any PostgresBindable] = idleHostsFrom.map { [$0] } ?? []
        let statement = PipelinedStatement(
            sql, [lease, workerID, connections, HostLimits.fallbackDefault] + idle, awaitDurableCommit: false, prepared: true, genericPlan: true)
        let rows = try db.pipelined([statement])[0].rows
        let claimed = rows.filter { $0["id"] != nil }
        guard let first = claimed.first else {
            return PlanningBatch(claims: [], morePending: false, hostContended: try rows.first?.bool("contended") ?? false)
        }
        let columns = JSONColumns()
        var claims = try claimed.map { row in
            var claim = try Self.claim(row, columns: columns)
            claim.holdsSlot = true
            return claim
        }
        let found = try first.int("found")
        let share = Self.share(found: found, limit: limit, connections: connections, free: try first.int("free"))
        let rest = min(share, found) - claims.count
        if rest > 0 {
            let more = PipelinedStatement(
                Self.restClaim(scope: scope), [lease, workerID, claims[0].info.host, rest, try first.string("claimed_at")],
                awaitDurableCommit: false, prepared: true, genericPlan: true)
            claims += try db.pipelined([more])[0].rows.map { try Self.claim($0, columns: columns) }
        }
        return PlanningBatch(claims: claims.sorted(by: Self.planningOrder), morePending: found > claims.count || found >= limit)
    }

    /// What `claimPlanning` took.
    public struct PlanningBatch: Sendable {
        /// The transfers claimed, highest priority first, then oldest.
        public let claims: [Claim]
        /// Whether the host may have pending transfers left (the claim took a share, or a full
        /// batch): work another lane can take.
        public let morePending: Bool

        /// Nothing was taken because other claimers held the row of every host with room at that
        /// moment (or took their last slots just before): the claim did not wait for them. They
        /// may leave slots and transfers, so looking again shortly may find some.
        public var hostContended = false

        /// How many connections the batch may open: the host slots its rows hold.
        public var connections: Int { claims.filter(\.holdsSlot).count }
    }

    /// How many of a host's pending transfers one batch takes, when `found` of them are pending
    /// (counted up to `limit`) and the host had `free` slots: all of them up to `limit`, unless
    /// they all fit in one batch. Then the batch takes its connections' part of the free slots
    /// (40 pending, 4 connections, 8 free slots: 20), so that another lane's batch fetches the
    /// rest at the same time and a list of a few hundred files uses the host's limit rather than
    /// one lane's connections. A share is never cut below `smallestShare` files: the lanes that
    /// would take the rest may not exist, and each batch costs its own claim and record.
    static func share(found: Int, limit: Int, connections: Int, free: Int) -> Int {
        guard found < limit, free > 0 else { return limit }
        return max((found * connections + free - 1) / free, smallestShare)
    }

    /// The conditions of a pending transfer of `host` (an expression) that `scope` may plan now.
    private static func pendingOf(host: String, scope: WorkScope) -> String {
        """
        state = 'pending' AND host = \(host) AND next_attempt_at <= now()
          AND \(unleasedSQL()) AND \(scope.owns("owner", worker: "$2"))
        """
    }

    /// The first step of `claimPlanning`. `$1` lease seconds, `$2` worker, `$3` connections, `$4`
    /// the default host limit; `limit` is part of the text (one prepared plan per connection and
    /// limit).
    ///
    /// It locks the row of the first pending transfer's host (priority, then age) that has a
    /// free slot and that no other claimer holds (`HostLimits.claimHost`: `SKIP LOCKED`,
    /// it never waits, and passes on to the next host with room), reading the pending index
    /// only until it finds one. Only then are the first `least($3, free)` of the host's pending
    /// transfers locked (skipping locked ones) and moved to `planning` holding a slot each, so a
    /// claim that finds every host busy or full has locked no transfer row, nor read one
    /// (`EXISTS`: whatever shape the plan of `picked` takes). `found` counts the host's pending
    /// transfers, up to `limit` (in the pending index's order, so that it never reads the
    /// table's finished rows), and `free` is the host's free slots before this claim. A claim
    /// that took nothing returns one row without an `id`, whose `contended` says whether a host
    /// with room was skipped (its row held by another claimer, or full once re-read).
    ///
    /// The update reaches its rows through the primary key (`id = ANY (ARRAY(...))`), which no
    /// plan turns into a hash join over the whole table, so the one generic plan a connection
    /// makes serves every run. A join with the chosen rows was planned that way while the table
    /// held fewer than some 200 000 rows (a scan of all of them per claim), so the statement
    /// had been planned afresh at every run: 1–2 ms of the server's CPU per claim, though most
    /// claims, woken by a slot given back, take nothing.
    /// With `idleHosts`, `$5` is the lowest priority it takes, only of hosts that hold no slot.
    static func slotClaim(limit: Int, scope: WorkScope, idleHosts: Bool = false) -> String {
        let host = HostLimits.claimHost(
            candidates: HostLimits.planningCandidates(worker: "$2", scope: scope), defaultLimit: "$4", idleFrom: idleHosts ? "$5" : nil)
        let pending = pendingOf(host: "(SELECT host FROM host)", scope: scope)
        return """
            WITH \(host),
            \(Self.claimToken),
            found AS MATERIALIZED (SELECT count(*) AS n FROM (SELECT 1 FROM transfers WHERE \(pending) ORDER BY priority DESC, id LIMIT \(max(limit, 0))) f),
            picked AS MATERIALIZED (
                SELECT id FROM transfers WHERE \(pending) AND EXISTS (SELECT 1 FROM host)
                ORDER BY priority DESC, id LIMIT least($3, (SELECT free FROM host)) FOR UPDATE SKIP LOCKED),
            claimed AS (
                UPDATE transfers t SET \(Self.planningLease(startedAt: "now()")), holds_slot = true, probe_host = NULL
                WHERE t.id = ANY (ARRAY(SELECT id FROM picked))
                RETURNING \(Self.returning), (SELECT n FROM found) AS found, (SELECT free FROM host) AS free, now()::text AS claimed_at)
            \(HostLimits.claimedOrContended("claimed"))
            """
    }

    /// The second step of `claimPlanning`: up to `$4` more pending transfers of host `$3` for
    /// worker `$2`'s batch, leased holding no slot (`$1` lease seconds), started at `$5`, the
    /// first step's start (a batch's transfers share one `started_at`). It locks only the rows
    /// it takes, skipping locked ones.
    ///
    /// These rows stay `pending`: the claim writes only the lease columns, which no index of
    /// `transfers` holds, so each new row version is a HOT update (no index entry, no history
    /// row; migration 0030 leaves the pages room for it). A pending row under a live lease is
    /// claimed (`pendingOf`, `claimedSQL`); one whose lease ran out (its worker died) is pending
    /// again as it stands, with nothing to rescue. A row the batch finishes goes from `pending`
    /// to `done` in the batch's record (`finish(probed:)`); one it hands on moves on when its
    /// plan is written (`writePlan` takes a claim in either state), and a failed probe's row
    /// stays `pending`, its lease dropped, until its retry (`postpone`).
    static func restClaim(scope: WorkScope) -> String {
        """
        WITH \(Self.claimToken),
        picked AS MATERIALIZED (
            SELECT id FROM transfers WHERE \(pendingOf(host: "$3", scope: scope))
            ORDER BY priority DESC, id LIMIT $4 FOR UPDATE SKIP LOCKED)
        UPDATE transfers t SET \(Self.lease(startedAt: "$5::timestamptz"))
        WHERE t.id = ANY (ARRAY(SELECT id FROM picked))
        RETURNING \(Self.returning)
        """
    }

    /// The columns a planning claim sets besides `holds_slot` (`$1` lease seconds, `$2` worker);
    /// `startedAt` is the start of a transfer's first claim.
    private static func planningLease(startedAt: String) -> String {
        "state = 'planning', \(lease(startedAt: startedAt))"
    }

    /// The CTE of a claim statement's lease token: one for all the rows it takes (each lease is
    /// named by its row's id and this token), drawn once rather than for each row, where it
    /// cost about a tenth of the claim (`gen_random_uuid()`: 1.2 µs, by hand).
    private static let claimToken = "token AS MATERIALIZED (SELECT gen_random_uuid() AS value)"

    /// The lease columns of a claim (`$1` lease seconds, `$2` worker; the statement's `token`
    /// CTE): none of them indexed.
    private static func lease(startedAt: String) -> String {
        """
        lease_token = (SELECT value FROM token), lease_expires_at = now() + make_interval(secs => $1),
               worker_id = $2, attempts = t.attempts + 1, started_at = coalesce(t.started_at, \(startedAt)), updated_at = now()
        """
    }

    /// A transfer row that is claimed though still `pending`: a small file in a batch claim,
    /// under a live lease (SQL on the row's columns, prefixed with `row`).
    public static func claimedSQL(_ row: String = "") -> String {
        "(\(row)state = 'pending' AND NOT \(unleasedSQL(row)))"
    }

    /// A row that no live lease holds (SQL on the row's columns, prefixed with `row`): of the
    /// pending rows, those a claim may take.
    static func unleasedSQL(_ row: String = "") -> String {
        "(\(row)lease_token IS NULL OR \(row)lease_expires_at < now())"
    }

    /// The fewest files a claim takes when it takes only its share of a short list.
    static let smallestShare = 16

    /// Takes the lease on one transfer whose segments are all done.
    public func claimFinalizing(lease: Double) throws -> Claim? {
        try db.query(
            Statements.TransferLeases.claimFinalizing(owned: scope.owns("owner", worker: "$2"), onStorage: WorkScope.onStorage("storage", storage: "$3")),
            [lease, workerID, storage]
        ).first.map { try Self.claim($0) }
    }

    private static func claim(_ row: PostgresRow, columns: JSONColumns = JSONColumns()) throws -> Claim {
        Claim(
            info: try TransferInfo(row, id: try row.int64("id"), columns: columns), leaseToken: try row.string("lease_token"),
            generation: try row.int("generation"),
            attempts: try row.int("attempts"))
    }

    /// Highest priority first, then oldest: the order in which the rows were numbered.
    private static func planningOrder(_ a: Claim, _ b: Claim) -> Bool {
        (a.info.priority, -a.info.id) > (b.info.priority, -b.info.id)
    }

    /// Renews a transfer lease; `false` means it was lost (stop, write nothing more).
    public func renew(_ claim: Claim, lease: Double) throws -> Bool {
        try db.query(
            Statements.TransferLeases.renew,
            [claim.info.id, claim.leaseToken, lease]
        ).affectedRows == 1
    }

    /// What the probe learned, written with the segment rows in one transaction.
    public struct Plan: Sendable {
        public var dest: String
        /// The origin's `host[:port]`, the key of its per-host limit.
        public var host: String
        public var size: Int64?
        public var etag: String?
        public var lastModified: String?
        public var contentType: String?
        public var acceptsRanges: Bool
        /// The ranges; the first is the probe's own and is returned already claimed by the planner.
        public var ranges: [SegmentPlan.Range]
        /// `nil` length: a single segment reading an unknown-length body to its end.
        public var unknownLength: Bool
        /// The storage the file goes to (`file:///ROOT`, `s3://BUCKET/PREFIX`), recorded with the plan.
        public var storage: String?
        /// The layout there when the storage decides it (`s3`); `nil` keeps the one enqueued.
        public var layout: StorageLayout?
        /// Mirrors the origin named (RFC 6249 `Link: rel=duplicate`), after its own URL.
        public var mirrors: [String] = []
        /// The digest the origin sent (`Digest:`), checked when none was given.
        public var digest: Checksum?
        /// Of a transfer with mirrors: the mirror that answered the probe, which the kept segment 0 fetches from.
        public var probedMirror: Int?

        public init(
            dest: String, host: String, size: Int64?, etag: String?, lastModified: String?, contentType: String?, acceptsRanges: Bool,
            ranges: [SegmentPlan.Range], unknownLength: Bool
        ) {
            self.dest = dest
            self.host = host
            self.size = size
            self.etag = etag
            self.lastModified = lastModified
            self.contentType = contentType
            self.acceptsRanges = acceptsRanges
            self.ranges = ranges
            self.unknownLength = unknownLength
        }
    }

    /// What writing a plan led to.
    public enum PlanResult: Sendable {
        /// The planning lease was gone: another worker plans this transfer now.
        case lost
        /// An empty file: no segments, the transfer went straight to finalizing.
        case noSegments
        /// Segment 0, claimed by this worker; the probe's response is its body.
        case firstSegment(ClaimedSegment)
        /// Every segment queued for the fetchers (the probe's response was not kept).
        case queued
    }

    /// Records the plan and the segment rows in one transaction and moves the transfer on. The
    /// transfer's attempts start again from zero: planning and finalizing each get `--max-attempts`.
    ///
    /// A fleet transfer enqueued without `--dest` learns its destination here, from the origin:
    /// one that another active fleet transfer already writes is refused (`destination-busy`),
    /// under the lock enqueue takes for the same rule, before any byte is written. Two URLs the
    /// origin names alike would otherwise write one partial file at once. Such a transfer is
    /// marked `named_by_origin` in its options, so that starting it over (`retry` of a
    /// canceled one) forgets the name and has the origin name it, and the checks run, again.
    /// - Parameter keepFirst: claim segment 0 for this worker, whose probe response is its body;
    ///   `false` queues it with the rest.
    public func writePlan(_ claim: Claim, plan: Plan, lease: Double, keepFirst: Bool = true) throws -> PlanResult {
        try db.transaction(awaitDurableCommit: false) { () -> PlanResult in
            let namedByOrigin = claim.info.dest == nil && claim.info.options.localTarget == nil
            if namedByOrigin { try refuseBusyNameLocked(plan.dest, of: claim) }
            let updated = try db.query(
                Statements.TransferLeases.writePlan,
                [
                    claim.info.id, claim.leaseToken, plan.dest, plan.size, plan.etag, plan.lastModified, plan.contentType, plan.acceptsRanges,
                    plan.ranges.isEmpty, namedByOrigin, plan.storage, plan.layout?.rawValue, plan.probedMirror,
                ]
            ).affectedRows
            guard updated == 1 else { return .lost }
            guard !plan.ranges.isEmpty else {
                try db.query("NOTIFY haul_work")
                return .noSegments
            }
            try db.query(Statements.TransferLeases.addOriginHost, [plan.host])
            try TransferStore.recordOriginMirrors(plan.mirrors, digest: plan.digest, of: claim.info, db)
            let offsets = plan.ranges.map(\.offset)
            let lengths: [Int64?] = plan.unknownLength ? [nil] : plan.ranges.map(\.length)
            try db.query(
                Statements.TransferLeases.insertSegments,
                [claim.info.id, claim.generation, offsets, lengths, claim.info.priority, lease, workerID, plan.host, keepFirst])
            if claim.info.mirrored || !plan.mirrors.isEmpty { try db.query(Statements.TransferLeases.spreadMirrors, [claim.info.id, claim.generation]) }
            if keepFirst, let mirror = plan.probedMirror, mirror != 0 {
                try db.query(Statements.TransferLeases.firstSegmentMirror, [claim.info.id, claim.generation, mirror])
            }
            // A kept segment 0 is the planner's own; only further segments are work for others.
            if plan.ranges.count > 1 || !keepFirst { try db.query("NOTIFY haul_work") }
            guard keepFirst else { return .queued }
            let row = try db.query(
                Statements.TransferLeases.firstSegment,
                [claim.info.id, claim.generation]
            ).first
            return .firstSegment(try ClaimedSegment(row!))
        }
    }

    /// Refuses (`destination-busy`) a destination the origin named for fleet transfer `claim`
    /// when another active fleet transfer writes it (a get's transfers write under their own
    /// folder, where its process keeps names apart). `writePlan` checks under the enqueue's
    /// lock; the planner asks first too, before it makes the partial file.
    public func refuseBusyName(_ dest: String, of claim: Claim) throws {
        try db.transaction(awaitDurableCommit: false) { try refuseBusyNameLocked(dest, of: claim) }
    }

    private func refuseBusyNameLocked(_ dest: String, of claim: Claim) throws {
        try TransferStore.lockDestinations(db)
        guard
            let row = try db.query(
                Statements.TransferLeases.busyName, [dest, claim.info.id, TransferStore.activeStates]
            ).first
        else { return }
        throw TransferStore.busy(dest, id: try row.int64("id"), state: try row.string("state"))
    }

    /// Finishes a transfer whose segments are all done and whose file is in place.
    /// - Returns: `false` when the finalizer's lease was lost.
    public func finish(_ claim: Claim, computedDigest: String?) throws -> Bool {
        try notifyingFinished(
            db.query(
                Statements.TransferLeases.finish, [claim.info.id, claim.leaseToken, computedDigest]
            ).affectedRows == 1)
    }

    /// Passes `finished` on, first notifying `TransferStore.finishedChannel` when it is true
    /// (the update committed on its own: the notification follows it).
    func notifyingFinished(_ finished: Bool) throws -> Bool {
        if finished { try db.query("NOTIFY \(TransferStore.finishedChannel)") }
        return finished
    }

    /// Hands a transfer back (shutdown): planning returns to pending, finalizing stays for another finalizer.
    public func release(_ claim: Claim) throws {
        try db.query(
            Statements.TransferLeases.release,
            [claim.info.id, claim.leaseToken])
    }

    /// The segments of a transfer's current generation with their recorded parts (parts layout).
    public func segments(of claim: Claim) throws -> [FinishedSegment] {
        let rows = try db.query(
            Statements.TransferLeases.finishedSegments, [claim.info.id, claim.generation]
        ).rows
        var segments: [FinishedSegment] = []
        for row in rows {
            let index = try row.int("idx")
            if segments.last?.index != index {
                segments.append(
                    FinishedSegment(
                        index: index, offset: try row.int64("byte_offset"), length: try row.optionalInt64("length") ?? 0,
                        bytesDone: try row.int64("bytes_done"), parts: []))
            }
            if let path = row["path"] {
                segments[segments.count - 1].parts.append(
                    PartRecord(path: path, offset: try row.int64("part_offset"), length: try row.int64("part_length"), replacesEarlierParts: false))
            }
        }
        return segments
    }
}

/// A done segment as the finalizer sees it.
public struct FinishedSegment: Sendable {
    public let index: Int
    public let offset: Int64
    public let length: Int64
    public let bytesDone: Int64
    public var parts: [PartRecord]
}
