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

    /// The keys recorded for the transfer of `claim`, in order.
    public func extractedObjects(of claim: Claim) throws -> [String] {
        try db.query("SELECT key FROM extracted_objects WHERE transfer_id = $1 ORDER BY key", [claim.info.id]).rows.map { try $0.string("key") }
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
