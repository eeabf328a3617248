import HaulCore
import HaulPostgres

/// The objects an extraction on S3 storage wrote, recorded under the finalizing lease so that a
/// failed or crashed extraction can delete them.
extension TransferLeases {
    /// Records `key` as written (or about to be) by the extraction of `claim`, under its lease.
    /// - Returns: false if the lease was lost.
    public func recordExtractedObject(_ claim: Claim, key: String) throws -> Bool {
        try db.query(
            """
            INSERT INTO extracted_objects (transfer_id, key)
            SELECT id, $3 FROM transfers WHERE id = $1 AND lease_token = $2::uuid
            ON CONFLICT (transfer_id, key) DO UPDATE SET recorded_at = now()
            """, [claim.info.id, claim.leaseToken, key]
        ).affectedRows == 1
    }

    /// Records the multipart upload now open for `key` (or, with `nil`, that it was completed or
    /// aborted), under the lease of `claim`. - Returns: false if the lease was lost.
    public func recordExtractedUpload(_ claim: Claim, key: String, uploadID: String?) throws -> Bool {
        try db.query(
            """
            UPDATE extracted_objects e SET upload_id = $4 FROM transfers t
            WHERE e.transfer_id = $1 AND e.key = $3 AND t.id = e.transfer_id AND t.lease_token = $2::uuid
            """, [claim.info.id, claim.leaseToken, key, uploadID]
        ).affectedRows == 1
    }

    /// An object an extraction recorded, with the multipart upload still open for it, if any.
    public struct ExtractedObject: Sendable, Equatable {
        public let key: String
        public let uploadID: String?
    }

    /// The objects recorded for the transfer of `claim`, in key order.
    public func extractedObjects(of claim: Claim) throws -> [ExtractedObject] {
        try db.query("SELECT key, upload_id FROM extracted_objects WHERE transfer_id = $1 ORDER BY key", [claim.info.id]).rows.map {
            ExtractedObject(key: try $0.string("key"), uploadID: $0["upload_id"])
        }
    }

    /// Forgets the recorded keys (once their objects are deleted), under the lease. - Returns: false if the lease was lost.
    public func forgetExtractedObjects(_ claim: Claim) throws -> Bool {
        try db.transaction {
            guard
                try db.query("SELECT 1 FROM transfers WHERE id = $1 AND lease_token = $2::uuid FOR UPDATE", [claim.info.id, claim.leaseToken]).rows.count == 1
            else { return false }
            try db.query("DELETE FROM extracted_objects WHERE transfer_id = $1", [claim.info.id])
            return true
        }
    }
}
