import HaulCore
import HaulQueue

/// The bytes a transfer downloaded so far are gone from storage: its partial file, or its S3
/// multipart upload. The segment or finalizer that finds so starts the transfer over
/// (`TransferLeases.downloadLost`: once, then it fails).
enum LostDownload {
    /// Whether `error` says the downloaded bytes are gone.
    static func matches(_ error: HaulError) -> Bool {
        error.code == .partialMissing || error.code == .s3NoUpload
    }

    /// Starts generation `generation` of transfer `id` over after `error`, or fails it if it
    /// started over once already, and logs which.
    static func startOver(
        _ id: Int64, generation: Int, after error: HaulError, database: ResilientConnection, workerID: String, fields: [(String, String)]
    ) {
        let restarted = try? database.run(patient: true) { conn in
            try TransferLeases(conn, workerID: workerID).downloadLost(id, generation: generation, code: error.code, reason: error.message)
        }
        Log.warning(
            restarted == true ? "downloaded bytes gone, transfer starts over" : "downloaded bytes gone again, transfer failed",
            fields + [("error", error.message)])
    }
}
