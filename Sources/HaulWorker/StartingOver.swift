import HaulCore
import HaulQueue

/// A transfer whose downloaded bytes cannot be used starts over as a new generation, once
/// (`TransferLeases.originChanged`, `downloadLost`); the segment or finalizer that finds so
/// reports it here and logs what came of it.
enum StartingOver {
    /// Whether `error` means the transfer must start over: the origin's file changed, or the
    /// bytes downloaded so far are gone from storage (the partial file, or another download
    /// overwrote it; the S3 multipart upload, or the object a single `PutObject` stored).
    static func applies(to error: HaulError) -> Bool {
        [.originChanged, .partialMissing, .partialOverwritten, .s3NoUpload, .s3UploadLost].contains(error.code)
    }

    /// Reports `error` (one that `applies`) for the transfer `reporter` works on, and logs what came of it.
    static func report(
        _ error: HaulError, by reporter: TransferLeases.Reporter, database: ResilientConnection, workerID: String, fields: [(String, String)]
    ) {
        let originChanged = error.code == .originChanged
        let outcome = try? database.run(patient: true) { conn in
            let leases = TransferLeases(conn, workerID: workerID)
            return try originChanged
                ? leases.originChanged(by: reporter, reason: error.message)
                : leases.downloadLost(by: reporter, code: error.code, reason: error.message)
        }
        log(outcome, cause: originChanged ? "origin changed" : "downloaded bytes gone", error: error, fields: fields)
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
