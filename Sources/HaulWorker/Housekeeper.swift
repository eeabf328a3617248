import Foundation
import HaulCore
import HaulPostgres
import HaulQueue

/// The worker's maintenance: its own registration and queue gauges, and for the rescuer role
/// the lease rescues, the clean-up of canceled transfers, the settling of S3 uploads and the
/// pruning of old transfers. Each job is a `MaintenanceService` with its own config and
/// interval; the housekeeper thread runs those due every heartbeat (`step`).
final class Housekeeper {
    /// The services, each run when due.
    let scheduler: MaintenanceScheduler

    init(shared: WorkerShared, environment: [String: String] = ProcessInfo.processInfo.environment) {
        scheduler = MaintenanceScheduler(Self.services(shared: shared, database: shared.maintenanceDatabase(), environment: environment))
    }

    /// The services of this worker, in the order they run within a round; a setting that is
    /// not valid is logged once, and its default (or, for `HAUL_RETENTION`, no pruning) applies.
    static func services(shared: WorkerShared, database: ResilientConnection, environment: [String: String]) -> [any MaintenanceService] {
        var services: [any MaintenanceService] = [HeartbeatService(shared: shared, database: database), QueueSampler(shared: shared, database: database)]
        guard shared.config.roles.contains(.rescuer) else { return services }
        services += [LeaseRescuer(shared: shared, database: database), CanceledDataCleaner(shared: shared, database: database)]
        let backend = shared.config.backend
        if backend.features.contains(.openUploads) {
            let sweeping = OrphanUploadSweeper.Config(environment: environment)
            for problem in sweeping.problems { Log.warning(problem) }
            services += [
                UploadSettler(shared: shared, database: database), OrphanUploadSweeper(config: sweeping, storage: backend, database: database),
            ]
        }
        let retention = RetentionPruner.Config(environment: environment)
        for problem in retention.problems { Log.warning(problem) }
        if let pruner = RetentionPruner(config: retention, database: database) { services.append(pruner) }
        return services
    }

    /// One round of housekeeping: every service that is due. - Returns: false (a round is
    /// never work that keeps the thread from pausing).
    func step() throws -> Bool {
        try scheduler.runDue()
        return false
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

/// Waits on `LISTEN haul_work` and wakes an idle lane when work is announced; tells
/// `/healthz` when its connection breaks or opens.
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
                    shared.metrics.databaseAnswered()
                    shared.announceWork()
                }
                // The stop signal ends the wait at once: the worker joins this thread when it
                // stops, and a stopping `haul get` should not sit out a poll before it exits.
                // One lane looks, and wakes the next only if it found work: every lane of every
                // worker asking at each notice cost the database a claim per lane (issue 55).
                if try !(connection?.waitForNotifications(timeout: 1, orUntilReadable: shared.stopSignal.descriptor).isEmpty ?? true) {
                    shared.announceWorkForOne()
                }
            } catch {
                connection = nil
                // The listener's connection is the first to see the server go away: `/healthz`
                // says so now, not at the next poll or heartbeat of an idle worker.
                if let error = error as? PostgresError, error.connectionLost { shared.metrics.databaseLost(error.message) }
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
