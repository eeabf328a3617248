import HaulCore
import HaulPostgres

/// The rows behind S3 storage: a transfer's multipart upload id and its parts' ETags.
extension TransferLeases {
    /// Records the multipart upload a planner opened for `claim` (and marks the transfer's
    /// layout `s3`), under the planning lease. - Returns: false if the lease was lost.
    public func recordObjectUpload(_ claim: Claim, uploadID: String) throws -> Bool {
        try db.query(
            "UPDATE transfers SET layout = '\(StorageLayout.s3.rawValue)', object_upload_id = $3, updated_at = now() WHERE id = $1 AND lease_token = $2::uuid AND state = 'planning'",
            [claim.info.id, claim.leaseToken, uploadID]
        ).affectedRows == 1
    }

    /// The ETag recorded for each segment of the claim's generation, by segment index (`nil`: none yet).
    public func partETags(of claim: Claim) throws -> [(index: Int, etag: String?)] {
        try db.query("SELECT idx, part_etag FROM segments WHERE transfer_id = $1 AND generation = $2 ORDER BY idx", [claim.info.id, claim.generation])
            .rows.map { (try $0.int("idx"), $0["part_etag"]) }
    }

    /// Forgets the upload once it is completed, under the finalizing lease.
    public func forgetObjectUpload(_ claim: Claim) throws {
        try db.query("UPDATE transfers SET object_upload_id = NULL WHERE id = $1 AND lease_token = $2::uuid", [claim.info.id, claim.leaseToken])
    }
}

/// Open multipart uploads the database knows of, for the housekeeper.
public enum ObjectUploads {
    /// An upload of a transfer that will not complete it.
    public struct Abandoned: Sendable {
        public let transferID: Int64
        public let dest: String
        public let uploadID: String
    }

    /// Uploads of canceled and failed transfers of `scope` (as worker `workerID` sees it), still to
    /// abort: each in the bucket of the workers that took the transfer on.
    public static func abandoned(_ db: PostgresConnection, scope: WorkScope, workerID: String, limit: Int = 50) throws -> [Abandoned] {
        try db.query(
            """
            SELECT id, dest, object_upload_id FROM transfers
            WHERE object_upload_id IS NOT NULL AND state IN ('canceled', 'failed') AND dest IS NOT NULL AND \(scope.owns("owner", worker: "$2"))
            ORDER BY id LIMIT $1
            """, [limit, workerID]
        ).rows.map { Abandoned(transferID: try $0.int64("id"), dest: try $0.string("dest"), uploadID: try $0.string("object_upload_id")) }
    }

    /// Forgets `uploadID` of a transfer once it is aborted (unless a new one replaced it).
    public static func forget(_ db: PostgresConnection, transferID: Int64, uploadID: String) throws {
        try db.query("UPDATE transfers SET object_upload_id = NULL WHERE id = $1 AND object_upload_id = $2", [transferID, uploadID])
    }

    /// Every upload id a transfer still owns (live or still to abort): its own, and those of the
    /// entries its extraction has open.
    public static func owned(_ db: PostgresConnection) throws -> Set<String> {
        Set(
            try db.query(
                """
                SELECT object_upload_id AS id FROM transfers WHERE object_upload_id IS NOT NULL
                UNION SELECT upload_id FROM extracted_objects WHERE upload_id IS NOT NULL
                """
            ).rows.compactMap { $0["id"] })
    }
}
