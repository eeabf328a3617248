import HaulCore
import HaulPostgres

/// What the operator dashboard reads: the fleet at a glance, pages of transfers, one transfer's
/// segments and history. Read-only; every query is bounded (a page, an hour, a top list).
/// Secrets are redacted as in `TransferStatus`.
public struct FleetView {
    let db: PostgresConnection

    /// Works through `connection`, which the caller owns.
    public init(_ connection: PostgresConnection) {
        self.db = connection
    }

    /// How many transfers are in each state. The unfinished ones are counted in
    /// `transfers_unfinished`, the done ones in `transfers_previous` (migration 0030): neither
    /// count reads the table's rows, which a fleet keeps by the million.
    public func transferCounts() throws -> [TransferState: Int] {
        var counts: [TransferState: Int] = [:]
        for row in try db.query(Statements.FleetView.transferCounts).rows {
            if let state = TransferState(rawValue: try row.string("state")) { counts[state] = try row.int("n") }
        }
        return counts
    }

    /// Bytes the whole fleet received in each of the last `minutes` minutes (oldest first, the
    /// current, unfinished minute last), from what the workers' heartbeats recorded.
    public func throughput(minutes: Int) throws -> [(minute: Int64, bytes: Int64)] {
        try db.query(
            Statements.FleetView.throughput, [max(1, minutes)]
        ).rows.map { (try $0.int64("minute"), try $0.int64("bytes")) }
    }

    /// Bytes per minute over the last `minutes` minutes, oldest first, per `key`: `worker`
    /// (what each worker received, `worker_throughput`) or `host` (the origin: the bytes of
    /// segments that finished in that minute, credited when each finished, and of the small
    /// files batches recorded then, `host_throughput`). At most `limit`
    /// keys, the busiest; zeros where a key had nothing.
    public func throughputBy(_ key: ThroughputKey, minutes: Int, limit: Int = 6) throws -> [(name: String, bytes: [Int64])] {
        let source =
            switch key {
            case .worker: Statements.FleetView.workerMinutes
            case .host: Statements.FleetView.hostMinutes
            }
        var series: [String: [Int64]] = [:]
        var order: [String] = []
        for row in try db.query(
            Statements.FleetView.throughputBy(source: source), [max(1, minutes), limit]
        ).rows {
            let name = try row.string("name")
            order.append(name)
            series[name] = try row.string("bytes").trimmingCharacters(in: ["{", "}"]).split(separator: ",").map { Int64($0) ?? 0 }
        }
        return order.map { ($0, series[$0] ?? []) }
    }

    /// What `throughputBy` groups bytes by.
    public enum ThroughputKey: Sendable {
        case worker, host
    }

    /// The queue once a minute over the last `minutes` minutes, oldest first (`queue_samples`,
    /// written by the workers' heartbeats): nil for a minute without a sample.
    public func queueDepth(minutes: Int) throws -> [(minute: Int64, pending: Int64?, downloading: Int64?, segmentsQueued: Int64?)] {
        try db.query(
            Statements.FleetView.queueDepth, [max(1, minutes)]
        ).rows.map {
            (try $0.int64("minute"), $0["pending"].flatMap { Int64($0) }, $0["downloading"].flatMap { Int64($0) }, $0["segments_queued"].flatMap { Int64($0) })
        }
    }

    /// Failed transfers grouped by error code, most frequent first, each with one example message.
    public struct FailureReason: Sendable {
        public let code: String
        public let count: Int
        public let example: String
    }

    /// The `limit` most frequent reasons transfers (of `batch`, if given) failed for. A reason
    /// is the error code, and for an origin's answer also its HTTP status (`origin-status 404`
    /// and `origin-status 503` are not one reason): the status is read from the message.
    public func failureReasons(batch: String? = nil, limit: Int = 20) throws -> [FailureReason] {
        try db.query(
            Statements.FleetView.failureReasons, [limit, batch]
        ).rows.map { FailureReason(code: try $0.string("code"), count: try $0.int("n"), example: try $0.string("example")) }
    }

    /// One origin host: its limit, what runs against it and what waits for it.
    public struct HostLoad: Sendable {
        public let host: String
        public let limit: Int
        /// Whether the limit is the host's own (not the `*` default).
        public let explicit: Bool
        /// Running segments and probes, as the claim counts them.
        public let running: Int
        /// Queued segments plus pending transfers.
        public let queued: Int
    }

    /// Every host with its limit and load (`HostLimits.list` plus the queue behind each host).
    public func hostLoads() throws -> [HostLoad] {
        var queued: [String: Int] = [:]
        for row in try db.query(
            Statements.FleetView.queuedByHost
        ).rows {
            queued[try row.string("host")] = try row.int("n")
        }
        return try HostLimits.list(db).map {
            HostLoad(host: $0.host, limit: $0.limit, explicit: $0.explicit, running: $0.running, queued: queued[$0.host] ?? 0)
        }
    }

    /// A worker process as its heartbeats describe it: the rows of `haul workers`, from the
    /// one definition in `WorkerRegistry`.
    public typealias WorkerInfo = WorkerRegistry.Entry

    /// Workers in start order; stopped ones only with `includeStopped`.
    public func workers(includeStopped: Bool) throws -> [WorkerInfo] {
        try WorkerRegistry(db).list(includeStopped: includeStopped)
    }

    /// A batch's counts, for the batch list.
    public struct BatchRow: Sendable {
        public let name: String
        public let createdAt: String
        public let countsByState: [TransferState: Int]
        public var total: Int { countsByState.values.reduce(0, +) }

        /// The batch as `/api/batches` and `haul batches --json` print it.
        public var json: [String: Any] {
            ["name": name, "created_at": createdAt, "total": total, "states": TransferState.named(countsByState)]
        }
    }

    /// Batches, newest first (at most `limit`).
    public func batches(limit: Int = 200) throws -> [BatchRow] {
        var order: [String] = []
        var created: [String: String] = [:]
        var counts: [String: [TransferState: Int]] = [:]
        for row in try db.query(
            Statements.FleetView.batches, [limit]
        ).rows {
            let name = try row.string("name")
            if created[name] == nil {
                order.append(name)
                created[name] = try row.string("created_at")
            }
            if let state = row["state"].flatMap(TransferState.init(rawValue:)) { counts[name, default: [:]][state] = try row.int("n") }
        }
        return order.map { BatchRow(name: $0, createdAt: created[$0] ?? "", countsByState: counts[$0] ?? [:]) }
    }
}
