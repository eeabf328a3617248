import HaulCore
import HaulQueue
import HaulStorage

/// On a storage that leaves uploads open (`StorageFeatures.openUploads`, S3), at every round:
/// aborts the uploads of this worker's canceled and failed transfers at once.
final class UploadSettler: MaintenanceService {
    let name = "upload settler"
    let interval = 0.0
    let runsAtStart = true
    private let shared: WorkerShared
    private let database: ResilientConnection

    init(shared: WorkerShared, database: ResilientConnection) {
        self.shared = shared
        self.database = database
    }

    func runOnce() throws {
        try Self.abortAbandoned(shared.config, database: database)
    }

    /// Aborts the uploads of canceled and failed transfers (of `config`'s scope) and forgets
    /// them. - Returns: how many.
    @discardableResult
    static func abortAbandoned(_ config: WorkerConfig, database: ResilientConnection) throws -> Int {
        let backend = config.backend
        let abandoned = try database.run(patient: false) { conn in try ObjectUploads.abandoned(conn, scope: config.scope, workerID: config.workerID) }
        for upload in abandoned {
            try backend.abortUpload(upload.uploadID, dest: upload.dest)
            try database.run(patient: false) { conn in try ObjectUploads.forget(conn, transferID: upload.transferID, uploadID: upload.uploadID) }
            Log.info("aborted the S3 upload of a stopped transfer", [("transfer", String(upload.transferID))])
        }
        return abandoned.count
    }
}
