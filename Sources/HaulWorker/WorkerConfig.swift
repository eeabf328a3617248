import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulStorage

/// The roles a worker process can play (docs/ARCHITECTURE.md "One binary, many roles").
public enum Role: String, Sendable, CaseIterable {
    case planner, fetcher, finalizer, rescuer

    /// Parses `planner,fetcher,…`, refusing unknown names.
    public static func parseList(_ text: String) throws -> Set<Role> {
        var roles: Set<Role> = []
        for name in text.split(separator: ",").map({ $0.trimmingWhitespace() }) where !name.isEmpty {
            guard let role = Role(rawValue: name) else {
                throw HaulError.usage("unknown role '\(name)'", hint: "roles are \(Role.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            roles.insert(role)
        }
        guard !roles.isEmpty else { throw HaulError.usage("--roles is empty", hint: "name at least one role") }
        return roles
    }
}

/// Uploads `file`, fetched from `url`, to the `s3://` `target` (`--upload-to`), replacing an
/// object another URL stored there only when `replacing`, stored with `contentType`; stops once
/// `shouldCancel` says so. - Returns: a line saying what was stored.
public typealias ObjectUploader =
    @Sendable (_ file: String, _ url: String, _ target: String, _ replacing: Bool, _ contentType: String?, _ shouldCancel: () -> Bool) throws
    -> String

/// Everything a worker process needs to know; built from flags and environment by the CLI.
public struct WorkerConfig: Sendable {
    /// Where the database is (conninfo or URL).
    public var conninfo: String
    /// The local root on this host: the folder files go to, or, for a storage that keeps them
    /// elsewhere, its private scratch folder (what is spooled locally).
    public var storage: StorageRoot
    /// The storage files go to, as the worker asks it (`Storage`), never asking which one it
    /// is: built by the command that builds the worker (a bucket), else the folder `storage`.
    public var backend: any Storage

    /// The storage's identity as transfers record it: `s3://BUCKET/PREFIX`, or `file:///ROOT`
    /// (no credential, no endpoint).
    public var storageIdentity: String { backend.identity }

    /// `plan` of the transfer `info` as this worker's storage takes it: cut again into the
    /// segments it takes (`fitted`), with the storage it goes to and the layout that storage
    /// decides (`s3`). - Throws: when the storage cannot hold the file.
    func placed(_ plan: TransferLeases.Plan, info: TransferInfo) throws -> TransferLeases.Plan {
        let first = backend.firstSegment(requested: info.segmentSize)
        var placed = try Self.fitted(plan, to: backend, first: first, requested: info.segmentSize)
        placed.storage = storageIdentity
        if backend.features.contains(.objectLayout) { placed.layout = .s3 }
        return placed
    }

    /// `plan` cut again into the segments `storage` takes (`Storage.segmentLength`), the first
    /// `first` bytes long; unchanged where the plan's own lengths stand (a folder) or it has none.
    static func fitted(_ plan: TransferLeases.Plan, to storage: any Storage, first: Int64, requested: Int64) throws -> TransferLeases.Plan {
        guard !plan.ranges.isEmpty else { return plan }
        let file = SegmentedFile(
            dest: plan.dest, size: plan.unknownLength ? nil : plan.size, acceptsRanges: plan.acceptsRanges, first: first, requested: requested)
        guard let length = try storage.segmentLength(for: file), let size = plan.size else { return plan }
        var fitted = plan
        fitted.ranges = SegmentPlan(size: size, firstSegment: first, segmentSize: length).ranges
        return fitted
    }

    /// Sends a finished file to an `s3://` `--upload-to` target (an upload destination, not the
    /// storage): set by the command that builds the worker (`ObjectUpload.send`).
    public var objectUploader: ObjectUploader?
    /// Segments fetched at once by this process.
    public var concurrency: Int = 4
    /// Roles this process plays.
    public var roles: Set<Role> = Set(Role.allCases)
    /// Pending transfers of one origin claimed and probed as one batch (`BatchProbe`, over up to
    /// `concurrency` connections); 1 probes them one by one.
    public var probeBatch: Int = 1024
    /// Lease length in seconds; heartbeats renew it at a third of that.
    public var lease: Double = 30
    /// No byte for this long aborts a request.
    public var stallTimeout: Int = 30
    /// A request slower than this for its time is aborted and its segment retried later
    /// (`--lowest-speed`, `--lowest-speed-time`); `nil`: off. Off too under `limitRate`, whose
    /// own pacing could hold a connection under it.
    public var lowestSpeed: LowestSpeed? = .standard
    /// Seconds a lane streams one segment before it gives the rest back to another origin's
    /// work that waits with no lane (`--yield-after`, `FairShare`, `WaitingWork`); `nil`: never.
    public var yieldAfter: Double? = 1
    /// Most bytes per second this worker receives in all (`--limit-rate`), shared by all its
    /// connections (`WorkerShared.pacer`); `nil`: no limit.
    public var limitRate: Int64?
    /// Attempts a segment gets before its transfer fails.
    public var maxAttempts: Int = 6
    /// Which origin addresses this worker connects to (`--deny-private-addresses`, `--allow-network`).
    public var addressPolicy = AddressPolicy.open
    /// The largest file this worker plans (`--max-file-size`); the storage's free space bounds it too.
    public var maxFileSize: Int64?
    /// Seconds between polls when no NOTIFY arrives.
    public var pollInterval: Double = 1
    /// Use polling only (for transaction-mode poolers, where LISTEN does not work).
    public var pollOnly: Bool = false
    /// Lanes past the first start only when work for them is announced (a plan with segments to
    /// share, files a batch left pending, a segment claimed while others may wait) or after a
    /// poll interval, instead of all looking for work at once: `haul get` knows its own work,
    /// and a lane that never starts opens no database connection.
    public var lanesOnDemand: Bool = false
    /// All the worker's threads share one database connection, taking turns: for a short-lived
    /// process (`haul get`), where starting a server process for each connection and planning
    /// its statements afresh there costs more than the turns. A fleet worker has a few
    /// (`DatabaseLinks`).
    public var sharedConnection: Bool = false
    /// Database connections the lanes share (`--db-connections`); the worker holds three more
    /// (checkpoints, housekeeping, LISTEN).
    public var laneConnections: Int = 2
    /// Checkpoint at least this often, in seconds…
    public var checkpointInterval: Double = 1
    /// …and at least every this many bytes.
    public var checkpointBytes: Int64 = 16 << 20
    /// TLS defaults (a transfer's own options add to these).
    public var tls: TLSOptions = TLSOptions(caBundle: ProcessInfo.processInfo.environment["HAUL_CA_BUNDLE"])
    /// The operator's extraction limits (`--extract-max-size`, `--extract-max-ratio`): ceilings that a
    /// transfer's own limits may lower but never raise; `nil` leaves the default (`ExtractionLimits`).
    public var extractMaxSize: Int64?
    /// See `extractMaxSize`.
    public var extractMaxRatio: Int64?
    /// Backoff for transient failures.
    public var backoff = Backoff()
    /// This process's identity in the `workers` table and in leases.
    public var workerID: String
    /// The transfers it takes on: the fleet's, or (`haul get`) only those it owns.
    public var scope = WorkScope.fleet

    /// A configuration with defaults, on `backend` (`nil`: the folder `storage`).
    public init(conninfo: String, storage: StorageRoot, backend: (any Storage)? = nil) {
        self.conninfo = conninfo
        self.storage = storage
        self.backend = backend ?? FolderStorage(root: storage)
        let host = ProcessInfo.processInfo.hostName
        self.workerID = "\(host)-\(getpid())-\(UInt32.random(in: 0...UInt32.max) & 0xffff)"
    }

    /// Seconds between lease renewals while working.
    var heartbeat: Double { max(0.2, lease / 3) }
}
