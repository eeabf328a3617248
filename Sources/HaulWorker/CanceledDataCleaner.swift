import HaulCore
import HaulQueue
import HaulStorage

/// Deletes the partial files and parts of canceled transfers (never a published file), at
/// every round, this process's locks on them given up first. A partial file another process
/// writes is left.
final class CanceledDataCleaner: MaintenanceService {
    let name = "canceled data cleaner"
    let interval = 0.0
    let runsAtStart = true
    /// How many canceled transfers one round cleans up.
    static let batch = 20
    private let shared: WorkerShared
    private let database: ResilientConnection

    init(shared: WorkerShared, database: ResilientConnection) {
        self.shared = shared
        self.database = database
    }

    func runOnce() throws {
        let config = shared.config
        let cleanups = try database.run { conn in
            try TransferLeases(conn, workerID: config.workerID, scope: config.scope).claimCleanups(limit: Self.batch)
        }
        for cleanup in cleanups {
            guard let files = try? TransferFiles(root: config.storage, relative: cleanup.dest) else { continue }
            let left = files.removeTemporaries(generation: cleanup.generation, holding: shared.heldPartials)
            Log.info("removed partial data of canceled transfer", [("transfer", String(cleanup.id))])
            for path in left { Log.warning("left a partial file another download writes", [("transfer", String(cleanup.id)), ("path", path)]) }
        }
    }
}
