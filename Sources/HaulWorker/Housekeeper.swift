import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import HaulS3Storage
import HaulStorage

/// The rescuer role plus the worker's own registration: re-queues segments and plans whose
/// lease ran out, moves fully downloaded transfers on if their last completion was lost in an
/// outage, and keeps this worker's row in `workers` fresh.
final class Housekeeper {
    private let shared: WorkerShared
    private let database: ResilientConnection
    private var lastRegistration = Date.distantPast
    private var lastPrune = Date()
    private var lastOrphanSweep = Date.distantPast

    init(shared: WorkerShared) {
        self.shared = shared
        database = shared.maintenanceDatabase()
    }

    /// One round of housekeeping. - Returns: whether anything was rescued.
    func step() throws -> Bool {
        let config = shared.config
        try heartbeat()
        try sampleQueue()
        guard config.roles.contains(.rescuer) else { return false }
        let (segments, plans, stuck) = try database.run { conn -> (Int, Int, Int) in
            let segments = try SegmentLeases.rescueExpired(on: conn)
            let plans = try TransferLeases.rescueExpired(on: conn)
            let stuck = try TransferLeases.finishStuckDownloads(on: conn)
            return (segments, plans, stuck)
        }
        if segments + plans + stuck > 0 {
            Log.info("rescued expired leases", [("segments", String(segments)), ("plans", String(plans)), ("finished", String(stuck))])
            shared.announceWork()
        }
        try Self.removeCanceledData(shared: shared, database: database)
        try settleObjectUploads()
        try pruneNowAndThen()
        return false
    }

    /// Now and then (`Retention.pruneInterval`: every 10 minutes for the default retention,
    /// more often for a short one) one worker of the fleet (an advisory lock picks it) deletes
    /// finished transfers older than `HAUL_RETENTION` (default 7d; `off` disables it).
    private func pruneNowAndThen() throws {
        let setting = ProcessInfo.processInfo.environment["HAUL_RETENTION"] ?? "7d"
        guard setting != "off", let retention = Duration.parseSeconds(setting) else { return }
        guard Date().timeIntervalSince(lastPrune) >= Retention.pruneInterval(retention: retention) else { return }
        lastPrune = Date()
        _ = try database.run { conn in try Retention.pruneIfFree(conn, olderThan: retention) }
    }

    /// On S3 storage: aborts the uploads of this worker's canceled and failed transfers at once,
    /// and every `HAUL_S3_ORPHAN_CHECK` (default 10m) those under the prefix that are Haul's but
    /// no transfer will complete (`ObjectStore.abortOrphans`; grace `HAUL_S3_ORPHAN_GRACE`,
    /// default 1h), so no orphaned parts accrue charges.
    func settleObjectUploads(sweep: Bool = false) throws {
        guard let store = shared.config.objectStore else { return }
        try store.abortAbandoned(database, scope: shared.config.scope, workerID: shared.config.workerID)
        let environment = ProcessInfo.processInfo.environment
        let every = environment["HAUL_S3_ORPHAN_CHECK"].flatMap { Duration.parseSeconds($0) } ?? 600
        guard sweep || Date().timeIntervalSince(lastOrphanSweep) >= every else { return }
        lastOrphanSweep = Date()
        try store.abortOrphans(database, grace: environment["HAUL_S3_ORPHAN_GRACE"].flatMap { Duration.parseSeconds($0) } ?? 3600)
    }

    /// Deletes the partial files and parts of canceled transfers (never a published file), this
    /// process's locks on them given up first. A partial file another process writes is left.
    static func removeCanceledData(shared: WorkerShared, database: ResilientConnection) throws {
        let config = shared.config
        let cleanups = try database.run { conn in try TransferLeases(conn, workerID: config.workerID, scope: config.scope).claimCleanups(limit: 20) }
        for cleanup in cleanups {
            guard let files = try? TransferFiles(root: config.storage, relative: cleanup.dest) else { continue }
            let left = files.removeTemporaries(generation: cleanup.generation, holding: shared.heldPartials)
            Log.info("removed partial data of canceled transfer", [("transfer", String(cleanup.id))])
            for path in left { Log.warning("left a partial file another download writes", [("transfer", String(cleanup.id)), ("path", path)]) }
        }
    }

    /// Updates the queue gauges from `QueueFigures`, the definition `workers` and `status` share,
    /// when there is a `/metrics` to show them.
    private func sampleQueue() throws {
        guard shared.metrics.isServed else { return }
        let figures = try database.run { conn in try QueueFigures.sample(conn) }
        shared.metrics.queueDepth.set(figures.due)
        shared.metrics.segments(figures.segments)
    }

    private func heartbeat() throws {
        let config = shared.config
        guard Date().timeIntervalSince(lastRegistration) >= config.heartbeat else { return }
        lastRegistration = Date()
        let beat = WorkerRegistry.Heartbeat(
            workerID: config.workerID, host: ProcessInfo.processInfo.hostName, pid: Int(getpid()),
            roles: config.roles.map(\.rawValue).sorted().joined(separator: ","), version: HaulVersion.current,
            bytesFetched: Int64(shared.metrics.bytesFetched.value))
        try database.run { conn in try WorkerRegistry(conn).beat(beat) }
    }

    /// Marks worker `workerID` stopped in the registry, through `connection` or else a new
    /// connection to `conninfo`. Best effort: a worker that cannot say so simply goes silent,
    /// and `haul workers` shows it dead after 30 s.
    static func deregister(_ workerID: String, on connection: PostgresConnection?, conninfo: String) {
        do {
            try WorkerRegistry(connection ?? PostgresConnection(conninfo: conninfo)).markStopped(workerID)
        } catch {
            Log.warning("could not mark this worker stopped in the registry", [("error", "\(error)")])
        }
    }
}

/// Waits on `LISTEN haul_work` and wakes idle role threads when work is announced.
final class Listener {
    private let shared: WorkerShared

    init(shared: WorkerShared) {
        self.shared = shared
    }

    func run() {
        var connection: PostgresConnection?
        while !shared.isStopping() {
            do {
                if connection == nil {
                    let conn = try PostgresConnection(conninfo: shared.config.conninfo)
                    try conn.listen("haul_work")
                    connection = conn
                    shared.announceWork()
                }
                // The stop signal ends the wait at once: the worker joins this thread when it
                // stops, and a stopping `haul get` should not sit out a poll before it exits.
                if try !(connection?.waitForNotifications(timeout: 1, orUntilReadable: shared.stopSignal.descriptor).isEmpty ?? true) {
                    shared.announceWork()
                }
            } catch {
                connection = nil
                // Reconnect after a second, unless the worker stops meanwhile.
                for _ in 0..<10 where !shared.isStopping() { Thread.sleep(forTimeInterval: 0.1) }
            }
        }
    }
}

/// The version recorded in the `workers` table and printed by `haul --version`.
public enum HaulVersion {
    /// Semantic version of this build.
    public static let current = "0.1.0"
}
