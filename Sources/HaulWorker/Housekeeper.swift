import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import HaulStorage

/// The rescuer role plus the worker's own registration: re-queues segments and plans whose
/// lease ran out, moves fully downloaded transfers on if their last completion was lost in an
/// outage, and keeps this worker's row in `workers` fresh.
final class Housekeeper {
    private let shared: WorkerShared
    private let database: Database
    private var lastRegistration = Date.distantPast
    private var lastPrune = Date()
    private var lastOrphanSweep = Date.distantPast

    init(shared: WorkerShared) {
        self.shared = shared
        database = Database(conninfo: shared.config.conninfo, stopping: shared.isStopping)
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
            let stuck = try conn.query(
                """
                UPDATE transfers t SET state = 'finalizing', updated_at = now()
                WHERE t.state = 'downloading' AND t.updated_at < now() - interval '2 seconds'
                  AND EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation)
                  AND NOT EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation AND s.state <> 'done')
                """
            ).affectedRows
            return (segments, plans, stuck)
        }
        if segments + plans + stuck > 0 {
            Log.info("rescued expired leases", [("segments", String(segments)), ("plans", String(plans)), ("finished", String(stuck))])
            shared.wakeup.signal()
        }
        try removeCanceledData()
        try settleObjectUploads()
        try pruneNowAndThen()
        return false
    }

    /// Every ten minutes one worker of the fleet (an advisory lock picks it) deletes finished
    /// transfers older than `HAUL_RETENTION` (default 7d; `off` disables it).
    private func pruneNowAndThen() throws {
        guard Date().timeIntervalSince(lastPrune) >= 600 else { return }
        lastPrune = Date()
        let setting = ProcessInfo.processInfo.environment["HAUL_RETENTION"] ?? "7d"
        guard setting != "off", let retention = Duration.parseSeconds(setting) else { return }
        _ = try database.run { conn in try Retention.pruneIfFree(conn, olderThan: retention) }
    }

    /// On S3 storage: aborts the uploads of canceled and failed transfers at once, and every
    /// `HAUL_S3_ORPHAN_CHECK` (default 10m) the uploads under the prefix no transfer owns that
    /// are older than `HAUL_S3_ORPHAN_GRACE` (default 1h), so no orphaned parts accrue charges.
    func settleObjectUploads(sweep: Bool = false) throws {
        guard let store = shared.config.objectStore else { return }
        try store.abortAbandoned(database)
        let environment = ProcessInfo.processInfo.environment
        let every = environment["HAUL_S3_ORPHAN_CHECK"].flatMap(Duration.parseSeconds) ?? 600
        guard sweep || Date().timeIntervalSince(lastOrphanSweep) >= every else { return }
        lastOrphanSweep = Date()
        try store.abortOrphans(database, grace: environment["HAUL_S3_ORPHAN_GRACE"].flatMap(Duration.parseSeconds) ?? 3600)
    }

    /// Deletes the partial files and parts of canceled transfers (never a published file).
    private func removeCanceledData() throws {
        let config = shared.config
        let cleanups = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).claimCleanups(limit: 20) }
        for cleanup in cleanups {
            guard let files = try? TransferFiles(root: config.storage, relative: cleanup.dest) else { continue }
            files.removeTemporaries(generation: cleanup.generation)
            Log.info("removed partial data of canceled transfer", [("transfer", String(cleanup.id))])
        }
    }

    /// Updates the queue gauges from the partial indexes (cheap however many rows are finished).
    private func sampleQueue() throws {
        let row = try database.run { conn in
            try conn.query(
                """
                SELECT (SELECT count(*) FROM segments WHERE state = 'queued' AND next_attempt_at <= now()) AS due,
                       (SELECT count(*) FROM segments WHERE state = 'queued') AS queued,
                       (SELECT count(*) FROM segments WHERE state = 'running') AS running
                """
            ).first
        }
        guard let row else { return }
        shared.metrics.databaseAnswered()
        shared.metrics.queueDepth.set(try row.int("due"))
        shared.metrics.segments(["queued": try row.int("queued"), "running": try row.int("running")])
    }

    private func heartbeat() throws {
        let config = shared.config
        guard Date().timeIntervalSince(lastRegistration) >= config.heartbeat else { return }
        lastRegistration = Date()
        _ = try database.run { conn in
            try conn.query(
                """
                INSERT INTO workers (id, host, pid, roles, version, bytes_fetched) VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (id) DO UPDATE SET
                    rate = CASE WHEN extract(epoch FROM now() - workers.heartbeat_at) > 0
                                THEN greatest(0, excluded.bytes_fetched - workers.bytes_fetched) / extract(epoch FROM now() - workers.heartbeat_at)
                                ELSE workers.rate END,
                    bytes_fetched = excluded.bytes_fetched, heartbeat_at = now(), stopped_at = NULL
                """,
                [
                    config.workerID, ProcessInfo.processInfo.hostName, Int(getpid()), config.roles.map(\.rawValue).sorted().joined(separator: ","),
                    HaulVersion.current, Int64(shared.metrics.bytesFetched.value),
                ])
        }
    }

    /// Marks this worker stopped in the registry.
    func deregister() {
        _ = try? database.run(patient: false) { conn in
            try conn.query("UPDATE workers SET stopped_at = now() WHERE id = $1", [shared.config.workerID])
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
                    shared.wakeup.signal()
                }
                if try !(connection?.waitForNotifications(timeout: 0.5).isEmpty ?? true) {
                    shared.wakeup.signal()
                }
            } catch {
                connection = nil
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }
}

/// The version recorded in the `workers` table and printed by `haul --version`.
public enum HaulVersion {
    /// Semantic version of this build.
    public static let current = "0.1.0"
}
