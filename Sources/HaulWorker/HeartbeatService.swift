import Foundation
import HaulCore
import HaulQueue

/// Keeps this worker's row in `workers` fresh, every heartbeat (a third of `--lease`).
final class HeartbeatService: MaintenanceService {
    let name = "heartbeat"
    let interval: Double
    let runsAtStart = true
    private let shared: WorkerShared
    private let database: ResilientConnection

    init(shared: WorkerShared, database: ResilientConnection) {
        self.shared = shared
        self.database = database
        interval = shared.config.heartbeat
    }

    func runOnce() throws {
        let config = shared.config
        let beat = WorkerRegistry.Heartbeat(
            workerID: config.workerID, host: ProcessInfo.processInfo.hostName, pid: Int(getpid()),
            roles: config.roles.map(\.rawValue).sorted().joined(separator: ","), version: HaulVersion.current,
            bytesFetched: Int64(shared.metrics.bytesFetched.value))
        try database.run { conn in try WorkerRegistry(conn).beat(beat) }
    }
}
