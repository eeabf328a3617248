import HaulCore
import HaulPostgres

/// The fetcher's side of the claim / lease / fence protocol (docs/ARCHITECTURE.md "Claim, lease, fence").
///
/// Every write after the claim names the segment *and* its lease token; zero rows updated
/// means the lease is gone and the caller must stop work on that segment at once.
public struct SegmentLeases {
    let db: PostgresConnection
    let workerID: String
    /// The transfers whose segments this worker claims and splits.
    let scope: WorkScope
    /// The claiming worker's storage identity (`WorkerConfig.storageIdentity`): segments of a
    /// transfer planned on another storage are not its to fetch. `nil`: any.
    let storage: String?

    /// Works through `connection` on behalf of worker `workerID`, on the transfers of `scope`
    /// (and of `storage`, when given).
    public init(_ connection: PostgresConnection, workerID: String, scope: WorkScope = .fleet, storage: String? = nil) {
        self.db = connection
        self.workerID = workerID
        self.scope = scope
        self.storage = storage
    }

    /// Which queued segments a claim takes.
    public enum Pick: Sendable, Equatable {
        /// Any, of a host with room: the queue's order.
        case any
        /// Only of a host that holds no slot, of this priority or higher (`HostLimits.hostWithRoom`).
        case idleHosts(from: Int)
        /// Only of a transfer that has no running segment, of this priority or higher: a
        /// transfer that waits while another of its origin holds the lanes (`WaitingWork`).
        case idleTransfers(from: Int)

        /// The priority floor, bound as `$5`.
        var floor: Int? {
            switch self {
            case .any: nil
            case .idleHosts(let floor), .idleTransfers(let floor): floor
            }
        }
    }

    /// Claims up to `limit` claimable segments, highest priority first, FIFO within a priority,
    /// never taking more than an origin host's free slots (see `HostLimits`).
    /// - Parameter pick: which segments it may take.
    public func claim(limit: Int, lease: Double, pick: Pick = .any) throws -> [ClaimedSegment] {
        try attempt(limit: limit, lease: lease, pick: pick).segments
    }

    /// What one claim statement did.
    public struct Attempt: Sendable {
        /// The segments claimed.
        public let segments: [ClaimedSegment]
        /// None was claimed because other claimers held the row of every host with room at that
        /// moment (or took their last slots just before): the claim did not wait for them.
        public let hostContended: Bool
    }

    /// `claim`, saying also whether host rows held by other claimers kept it from taking
    /// segments. One statement (locking a host row, rechecking its free slots under the lock,
    /// taking the segments, and — by trigger — counting them in the host's `busy`), committed
    /// without waiting for the WAL flush. It never waits for a host row another claimer holds:
    /// it takes the next host with room, or, when every such row is held, nothing, and the lane
    /// looks again shortly (`ClaimContention`).
    public func attempt(limit: Int, lease: Double, pick: Pick = .any) throws -> Attempt {
        let sql = Self.claimStatement(limit: limit, scope: scope, pick: pick)
        let floor: [any PostgresBindable] = pick.floor.map { [$0] } ?? []
        let statement = PipelinedStatement(
            sql, [lease, workerID, HostLimits.fallbackDefault, storage] + floor, awaitDurableCommit: false, prepared: true, genericPlan: true)
        let rows = try db.pipelined([statement])[0].rows
        let segments = try rows.filter { $0["id"] != nil }.map(ClaimedSegment.init)
        return Attempt(segments: segments, hostContended: segments.isEmpty ? try rows.first?.bool("contended") ?? false : false)
    }

    /// `EXPLAIN (ANALYZE, BUFFERS)` of the claim statement, in a transaction that is rolled back
    /// (nothing is claimed): for `haul-bench explain`.
    public func explainClaim(limit: Int) throws -> String {
        try db.query("BEGIN")
        // A failed ROLLBACK leaves nothing behind: the transaction claimed nothing, and a broken
        // connection ends it anyway.
        defer { _ = try? db.query("ROLLBACK") }
        return try db.query(
            "EXPLAIN (ANALYZE, BUFFERS) " + Self.claimStatement(limit: limit, scope: scope), [30.0, workerID, HostLimits.fallbackDefault, storage]
        )
        .rows.map { $0["QUERY PLAN"] ?? "" }.joined(separator: "\n")
    }

    /// `$1` lease seconds, `$2` worker, `$3` the default host limit. The limit is part of the
    /// text, so that the plan prepared once per connection (and per limit) is made for it.
    ///
    /// It locks the row of the first claimable segment's host that has a free slot and that no
    /// other claimer holds (`HostLimits.claimHost`: `SKIP LOCKED`, it never waits, and passes
    /// on to the next host with room), then locks up to `limit` of that host's segments
    /// (skipping locked ones) and takes no more of them than the free slots on the locked row.
    /// A claimer never waits for a lock at all, so it cannot deadlock with a transaction that
    /// holds a host row and waits for a segment row (an operator's bulk cancel). A claim that
    /// took nothing returns one row without an `id` (`HostLimits.claimedOrContended`).
    /// With a `pick` other than `.any`, `$5` is the lowest priority it takes.
    static func claimStatement(limit: Int, scope: WorkScope, pick: Pick = .any) -> String {
        var idleHosts: String?
        var idleTransfers: String?
        switch pick {
        case .any: break
        case .idleHosts: idleHosts = "$5"
        case .idleTransfers: idleTransfers = "$5"
        }
        let host = HostLimits.claimHost(
            candidates: HostLimits.segmentCandidates(worker: "$2", scope: scope, storage: "$4", idleTransfersFrom: idleTransfers), defaultLimit: "$3",
            idleFrom: idleHosts)
        return """
            WITH \(host), picked AS MATERIALIZED (
                SELECT s.id, s.priority FROM segments s
                JOIN transfers t ON t.id = s.transfer_id AND t.state = 'downloading' AND t.generation = s.generation
                WHERE s.state = 'queued' AND s.host = (SELECT host FROM host) AND s.next_attempt_at <= now() AND \(scope.owns("t.owner", worker: "$2"))
                  AND \(WorkScope.onStorage("t.storage", storage: "$4"))\(idleTransfers.map { " AND " + Self.idleTransfer(from: $0) } ?? "")
                ORDER BY s.priority DESC, s.id
                LIMIT \(max(limit, 0))
                FOR UPDATE OF s SKIP LOCKED
            ), taken AS MATERIALIZED (
                -- The free slots cut here, not in picked's LIMIT: the planner must see picked's size
                -- (the limit), or it plans the UPDATE for a tenth of the table (a hash join over all segments).
                SELECT id FROM picked ORDER BY priority DESC, id LIMIT coalesce((SELECT free FROM host), 0)
            ), claimed AS (
                UPDATE segments s SET state = 'running', lease_token = gen_random_uuid(), lease_expires_at = now() + make_interval(secs => $1),
                       worker_id = $2, attempts = s.attempts + 1, updated_at = now()
                FROM taken, transfers t
                WHERE s.id = taken.id AND t.id = s.transfer_id
                RETURNING \(ClaimedSegment.returning))
            \(HostLimits.claimedOrContended("claimed"))
            """
    }

    /// A queued segment `s` whose transfer has no running segment, of priority `floor` (an
    /// expression) or higher. The running segments are read once (a few per lane of the fleet),
    /// not once per candidate.
    static func idleTransfer(from floor: String) -> String {
        "s.priority >= \(floor) AND s.transfer_id NOT IN (SELECT transfer_id FROM segments WHERE state = 'running')"
    }

    /// What a checkpoint found.
    public enum Outcome: Equatable, Sendable {
        /// Progress recorded and the lease renewed.
        case recorded
        /// Recorded, but an idle worker split the segment: it now ends after `length` bytes.
        case shortened(length: Int64)
        /// Another worker holds the segment now, or it was reset, or put back in the queue after
        /// its lease ran out: stop at once, write nothing more.
        case leaseLost
        /// The transfer was canceled or paused: stop, release the segment, keep the bytes.
        case transferStopped(TransferState)
    }

    /// Records `bytesDone` (already durable on storage) and renews the lease.
    ///
    /// The fence is the lease token, as for a completion: a segment whose lease ran out (its
    /// worker cut off from the database) and that the rescuer put back in the queue keeps its
    /// holder's token until another worker claims it. Its holder's late checkpoint still records
    /// the bytes, so whoever claims the segment next resumes after them, and then says
    /// `leaseLost`: the holder stops, since the segment waits in the queue for a claim under the
    /// origin's connection limit.
    /// - Parameter part: in the parts layout, this attempt's part file and its durable length.
    public func checkpoint(_ segment: ClaimedSegment, bytesDone: Int64, lease: Double, part: PartRecord?) throws -> Outcome {
        let settle = settleCut(segment, bytesDone: bytesDone)
        let progress = PipelinedStatement(
            Statements.SegmentLeases.checkpoint, [segment.id, segment.leaseToken, bytesDone, lease], awaitDurableCommit: false, prepared: true,
            genericPlan: true)
        // A segment of the inplace layout is two statements in one round trip (a fast download
        // checkpoints many times a second); a part file is recorded in the same transaction as
        // the progress.
        let letGo: PostgresRow?
        let row: PostgresRow?
        if let part {
            (letGo, row) = try db.transaction(awaitDurableCommit: false) { () -> (PostgresRow?, PostgresRow?) in
                let results = try db.pipelined([settle, progress])
                if let row = results[1].first {
                    try record(part.capped(atFileOffset: try row.optionalInt64("length").map { segment.offset + $0 }), for: segment)
                }
                return (results[0].first, results[1].first)
            }
        } else {
            let results = try db.pipelined([settle, progress])
            (letGo, row) = (results[0].first, results[1].first)
        }
        try wakeLanes(letGo)
        guard let row, try !row.bool("requeued") else { return .leaseLost }
        let state = TransferState(rawValue: try row.string("state")) ?? .failed
        guard state == .downloading else { return .transferStopped(state) }
        if let length = try row.optionalInt64("length"), let claimed = segment.length, length < claimed { return .shortened(length: length) }
        return .recorded
    }

    private func record(_ part: PartRecord, for segment: ClaimedSegment) throws {
        if part.replacesEarlierParts {
            try db.query(Statements.SegmentLeases.deleteEarlierParts, [segment.id, part.path])
        }
        try db.query(
            Statements.SegmentLeases.recordPart, [segment.id, part.path, part.offset, part.length])
    }

    /// What a completion led to.
    public enum Completion: Sendable, Equatable {
        /// The lease was gone: the work is discarded.
        case leaseLost
        /// Recorded; other segments of the transfer are still to come.
        case recorded
        /// Recorded, and it was the last: the transfer is ready for a finalizer.
        case transferReady
    }

    /// Marks the segment done, then moves its transfer on to finalizing if it was the last one.
    /// No NOTIFY goes out for that: the completing worker's own lanes finalize it (the caller
    /// wakes them), and other workers' polling is the backstop.
    /// - Parameter etag: on S3 storage, the ETag of the part this attempt uploaded.
    public func complete(_ segment: ClaimedSegment, bytesDone: Int64, part: PartRecord?, etag: String? = nil) throws -> Completion {
        let move = PipelinedStatement(
            Statements.SegmentLeases.completeTransfer, [segment.transferID, segment.generation, segment.length == nil ? bytesDone : nil],
            awaitDurableCommit: true, prepared: true,
            genericPlan: true)
        let settle = settleCut(segment, bytesDone: bytesDone)
        let letGo: PostgresRow?
        let updated: Bool
        let moved: Int
        if let part {
            // The parts layout records the part in the same transaction.
            (letGo, updated) = try db.transaction(awaitDurableCommit: false) { () -> (PostgresRow?, Bool) in
                let results = try db.pipelined([settle, markDone(segment, bytesDone: bytesDone, etag: etag)])
                guard let done = try results[1].first?.int64("bytes_done") else { return (results[0].first, false) }
                try record(part.capped(atFileOffset: segment.offset + done), for: segment)
                return (results[0].first, true)
            }
            moved = updated ? try db.query(move.sql, move.parameters).affectedRows : 0
        } else {
            // Transactions in one round trip: the move's snapshot is taken after the segment's
            // commit, so that whichever completion commits last sees every segment done. Run
            // after a lost lease, the move is as right as anyone's: it checks every segment.
            let results = try db.pipelined([settle, markDone(segment, bytesDone: bytesDone, etag: etag), move])
            letGo = results[0].first
            updated = !results[1].rows.isEmpty
            moved = results[2].affectedRows
        }
        try wakeLanes(letGo)
        guard updated else { return .leaseLost }
        return moved == 1 ? .transferReady : .recorded
    }

    /// The holder's word on a straggler split's cut, before its checkpoint or completion: a
    /// cut it did not know of and is past takes the cut-off piece back (if nobody fetched any of
    /// it), a cut it knows of lets the piece be claimed (`settleCut.sql`).
    private func settleCut(_ segment: ClaimedSegment, bytesDone: Int64) -> PipelinedStatement {
        PipelinedStatement(
            Statements.SegmentLeases.settleCut, [segment.id, segment.leaseToken, bytesDone, segment.length, segment.knowsOfCut], awaitDurableCommit: false,
            prepared: true, genericPlan: true)
    }

    /// Wakes idle lanes when `settleCut` let a cut-off piece be claimed.
    private func wakeLanes(_ settled: PostgresRow?) throws {
        if try settled?.bool("let_go") == true { try db.query("NOTIFY haul_work") }
    }

    /// Marks the segment done (no wait for the WAL flush); returns `bytes_done`, no row if the lease was lost.
    /// The fence is the lease token, not the clock: a segment whose lease ran out (a worker cut
    /// off from the database while it finished) and that the rescuer put back in the queue still
    /// carries its holder's token until another worker claims it, so the finished work counts.
    private func markDone(_ segment: ClaimedSegment, bytesDone: Int64, etag: String?) -> PipelinedStatement {
        PipelinedStatement(
            Statements.SegmentLeases.markDone, [segment.id, segment.leaseToken, bytesDone, etag], awaitDurableCommit: false, prepared: true, genericPlan: true)
    }

    /// Straggler splitting: when this worker has nothing to claim, it cuts the running segment
    /// with the most bytes left in two. The running worker keeps the first half (its `length`
    /// shrinks in the same statement; it learns so at its next checkpoint and stops there) and
    /// the second half becomes a new queued segment that any worker may claim once the holder's
    /// next checkpoint or completion knew of the cut (or, should neither come, after two
    /// checkpoint intervals and `checkpointLatency`). A holder that was already past the cut
    /// when it learned of it takes the piece back whole, so no byte is fetched twice even when
    /// the room below was too small (a segment whose rate jumped after a stall).
    ///
    /// Only a segment whose checkpoints recorded its rate is split: until then nobody knows
    /// whether it straggles. A transfer that still has a segment queued to be fetched now, or a
    /// cut-off piece waiting for its holder's word, is never split: its idle workers claim that
    /// one. (A lane that found nothing to claim a moment ago may find a plan written since; a
    /// split then would only cut a segment that had just started, and a cut makes its worker
    /// drop the bytes in flight past it. And while the host's slots are full, one split already
    /// waits for a slot: more would cut every running segment down to the smallest piece.)
    /// - Parameters:
    ///   - minimumPiece: neither part is cut smaller than this many bytes…
    ///   - minimumTime: …nor than the segment's recorded rate fetches in this many seconds: a
    ///     piece a fast straggler would fetch at once is not worth a new request, nor the bytes
    ///     its running worker has in flight past the cut when it stops there (the socket buffers
    ///     of a fast connection hold megabytes).
    ///   - headroom: two checkpoints' worth of bytes (`2 × --checkpoint-bytes`). Past its
    ///     recorded `bytes_done`, the running worker keeps what it may receive before it learns of
    ///     the cut, since a cut inside those bytes has them fetched twice: what came since its
    ///     last checkpoint and until its next one (two checkpoints, each at most `headroom / 2`
    ///     and at most `rate × checkpointInterval`), what comes while that checkpoint is synced
    ///     and recorded (`rate × checkpointLatency`, which also covers what a fast origin keeps
    ///     in the sockets ahead of the reader), and 1 MiB a slow connection's sockets may hold.
    ///   - checkpointInterval: seconds between the running worker's checkpoints.
    ///   - checkpointLatency: seconds a checkpoint may take to be synced and recorded while
    ///     the stream goes on.
    /// - Returns: whether a segment was split.
    public func splitStraggler(
        minimumPiece: Int64, minimumTime: Double = 0, headroom: Int64 = 0, checkpointInterval: Double = 1, checkpointLatency: Double = 0
    ) throws -> Bool {
        let row: PostgresRow?
        do {
            row = try db.query(
                Statements.SegmentLeases.splitStraggler(s3Layout: StorageLayout.s3.rawValue, owned: scope.owns("t.owner", worker: "$2")),
                [minimumPiece, workerID, headroom, checkpointInterval, minimumTime, checkpointLatency]
            ).first
        } catch let error as PostgresError where error.isUniqueViolation {
            // Two workers split segments of one transfer at the same moment and picked the same
            // new index: the statement that lost left everything as it was. Nothing to do now.
            return false
        }
        // No NOTIFY: the cut-off piece waits for its holder's word, which sends one.
        return row != nil
    }

    /// Gives the segment back (shutdown, pause, cancel, a lane yielding to waiting work),
    /// keeping its checkpointed bytes; it is claimable again after `delay` seconds.
    public func release(_ segment: ClaimedSegment, after delay: Double = 0) throws {
        try db.queryWithoutDurableCommit(
            Statements.SegmentLeases.release, [segment.id, segment.leaseToken, delay])
        try db.query("NOTIFY haul_work")
    }

    /// Records a failed attempt. Transient failures go back to the queue after `retryAfter`
    /// seconds until `maxAttempts`; then, or for a permanent failure, the transfer fails.
    public func fail(_ segment: ClaimedSegment, error: HaulError, retryAfter: Double, maxAttempts: Int) throws {
        let retry = error.isTransient && segment.attempts < maxAttempts
        let final = error.isTransient && !retry ? error.givenUp(after: segment.attempts) : error
        let updated = try db.queryWithoutDurableCommit(
            Statements.SegmentLeases.fail, [segment.id, segment.leaseToken, final.message, retry, retryAfter]
        ).affectedRows
        guard updated == 1, !retry else { return }
        try TransferLeases(db, workerID: workerID).failTransfer(
            segment.transferID, code: error.code, message: describe(final.message, hint: final.hint, segment: segment))
    }

    private func describe(_ message: String, hint: String?, segment: ClaimedSegment) -> String {
        let base = "segment \(segment.index): \(message)"
        return hint.map { "\(base); \($0)" } ?? base
    }

    /// Puts segments whose lease ran out back in the queue, keeping checkpointed bytes and the
    /// lease token: until another worker claims the segment (a new token), its holder may still
    /// complete it (`markDone`).
    /// - Returns: how many were rescued.
    public static func rescueExpired(on db: PostgresConnection) throws -> Int {
        // One host per statement. Every release locks its segment rows, then (by trigger, at the
        // statement's end) its host row for the slot counter; a statement over several hosts
        // would lock their rows in the order of its segments, and two such statements could
        // each hold the host row the other waits for.
        var rescued = 0
        while true {
            // Rows in id order, those another rescuer holds skipped (see TransferLeases.rescueExpired).
            let count = try db.queryWithoutDurableCommit(
                Statements.SegmentLeases.rescueExpired
            ).affectedRows
            guard count > 0 else { break }
            rescued += count
        }
        if rescued > 0 { try db.query("NOTIFY haul_work") }
        return rescued
    }
}

/// One part file of the parts layout and the bytes of it that are durable.
public struct PartRecord: Sendable {
    /// Path relative to the storage root.
    public let path: String
    /// Where the part's first byte belongs in the file.
    public let offset: Int64
    /// Durable bytes in the part.
    public let length: Int64
    /// Set when this attempt restarted the segment from its first byte.
    public let replacesEarlierParts: Bool

    /// The record with its length cut so the part ends no later than file offset `end` (a
    /// split segment's worker may have written past its segment's new end).
    func capped(atFileOffset end: Int64?) -> PartRecord {
        guard let end, offset + length > end else { return self }
        return PartRecord(path: path, offset: offset, length: max(0, end - offset), replacesEarlierParts: replacesEarlierParts)
    }

    /// Creates a record.
    public init(path: String, offset: Int64, length: Int64, replacesEarlierParts: Bool) {
        self.path = path
        self.offset = offset
        self.length = length
        self.replacesEarlierParts = replacesEarlierParts
    }
}
