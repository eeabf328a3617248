import HaulCore
import HaulS3Storage

/// On S3 storage, at every round: aborts the multipart uploads of this worker's canceled and
/// failed transfers at once.
final class UploadSettler: MaintenanceService {
    let name = "upload settler"
    let interval = 0.0
    let runsAtStart = true
    private let shared: WorkerShared
    private let store: ObjectStore
    private let database: ResilientConnection

    init(shared: WorkerShared, store: ObjectStore, database: ResilientConnection) {
        self.shared = shared
        self.store = store
        self.database = database
    }

    func runOnce() throws {
        try store.abortAbandoned(database, scope: shared.config.scope, workerID: shared.config.workerID)
    }
}
