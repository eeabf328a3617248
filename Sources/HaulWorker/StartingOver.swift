import HaulCore
import HaulQueue

/// A transfer whose downloaded bytes cannot be used starts over as a new generation, once
/// (`TransferLeases.originChanged`, `downloadLost`); the segment or finalizer that finds so
/// reports it here and logs what came of it.
enum StartingOver {
    /// Whether `error` says the bytes downloaded so far are gone from storage: the partial
    /// file, the S3 multipart upload, or the object a single `PutObject` stored.
    static func isLostDownload(_ error: HaulError) -> Bool {
        error.code == .partialMissing || error.code == .s3NoUpload || error.code == .s3UploadLost
    }

    /// Reports that the transfer `reporter` works on lost its downloaded bytes (`error`).
    static func downloadLost(
        by reporter: TransferLeases.Reporter, after error: HaulError, database: ResilientConnection, workerID: String, fields: [(String, String)]
    ) {
        let outcome = try? database.run(patient: true) { conn in
            try TransferLeases(conn, workerID: workerID).downloadLost(by: reporter, code: error.code, reason: error.message)
        }
        log(outcome, cause: "downloaded bytes gone", error: error, fields: fields)
    }

    /// Reports that the origin's file changed under the download `reporter` works on.
    static func originChanged(
        by reporter: TransferLeases.Reporter, after error: HaulError, database: ResilientConnection, workerID: String, fields: [(String, String)]
    ) {
        let outcome = try? database.run(patient: true) { conn in
            try TransferLeases(conn, workerID: workerID).originChanged(by: reporter, reason: error.message)
        }
        log(outcome, cause: "origin changed", error: error, fields: fields)
    }

    /// One line on what the report did (`nil`: the database could not be told; the lease runs
    /// out and the work is taken up again).
    private static func log(_ outcome: TransferLeases.StartOver?, cause: String, error: HaulError, fields: [(String, String)]) {
        let fields = fields + [("error", error.message)]
        switch outcome {
        case .restarted: Log.warning("\(cause), transfer starts over", fields)
        case .failed: Log.warning("\(cause) again, transfer failed", fields)
        case .fenced: Log.warning("\(cause); lease lost (the transfer started over or finished, or another worker has it now), stopped", fields)
        case nil: Log.warning("\(cause); not recorded (the database did not answer), the work is taken up again when its lease runs out", fields)
        }
    }
}
