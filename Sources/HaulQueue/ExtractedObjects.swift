import HaulCore
import HaulPostgres

/// The objects an extraction on S3 storage wrote, recorded under the finalizing lease so that a
/// failed or crashed extraction can delete them.
extension TransferLeases {
    /// Records `key` as written (or about to be) by the extraction of `claim`, under its lease.
    /// - Returns: false if the lease was lost.
    public func recordExtractedObject(_ claim: Claim, key: String) throws -> Bool {
        try db.query(
            Statements.ExtractedObjects.recordExtractedObject, [claim.info.id, claim.leaseToken, key]
        ).affectedRows == 1
    }

    /// Records the multipart upload now open for `key` (or, with `nil`, that it was completed or
    /// aborted), under the lease of `claim`. - Returns: false if the lease was lost.
    public func recordExtractedUpload(_ claim: Claim, key: String, uploadID: String?) throws -> Bool {
        try db.query(
            Statements.ExtractedObjects.recordExtractedUpload, [claim.info.id, claim.leaseToken, key, uploadID]
        ).affectedRows == 1
    }

    /// An object an extraction recorded, with the multipart upload still open for it, if any.
    public struct ExtractedObject: Sendable, Equatable {
        public let key: String
        public let uploadID: String?
    }

    /// The objects recorded for the transfer of `claim`, in key order.
    public func extractedObjects(of claim: Claim) throws -> [ExtractedObject] {
        try db.query(Statements.ExtractedObjects.extractedObjects, [claim.info.id]).rows.map {
            ExtractedObject(key: try $0.string("key"), uploadID: $0["upload_id"])
        }
    }

    /// Forgets the recorded keys (once their objects are deleted), under the lease. - Returns: false if the lease was lost.
    public func forgetExtractedObjects(_ claim: Claim) throws -> Bool {
        try db.transaction {
            guard
                try db.query(Statements.ExtractedObjects.lockLeased, [claim.info.id, claim.leaseToken]).rows.count == 1
            else { return false }
            try db.query(Statements.ExtractedObjects.forgetExtractedObjects, [claim.info.id])
            return true
        }
    }
}
