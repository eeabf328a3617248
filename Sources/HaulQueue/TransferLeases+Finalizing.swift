import HaulCore
import HaulPostgres

/// The finalizer's record of its stages: what an earlier finalizer got done (a retry redoes only
/// what is missing), and each stage marked under the finalizing lease's fence.
extension TransferLeases {
    /// How far an earlier finalizer got with this transfer (a retry redoes only what is missing).
    public struct Progress: Sendable {
        public let published: Bool
        /// A finalizer of this generation set out to rename the file into place (`markPublishing`),
        /// though none recorded that it did.
        public let publishing: Bool
        public let extracted: Bool
        public let uploadURL: String?
    }

    /// Reads the finalizing stages already done.
    public func progress(of claim: Claim) throws -> Progress {
        let row = try db.query(
            Statements.TransferLeases.progress, [claim.info.id, claim.generation]
        ).first
        return Progress(
            published: try row?.bool("published") ?? false, publishing: try row?.bool("publishing") ?? false,
            extracted: try row?.bool("extracted") ?? false, uploadURL: row?["upload_url"])
    }

    /// Records, before the rename, that this finalizer is about to put its generation's file in
    /// place, fenced by the finalizing lease: only then may a later finalizer that finds the
    /// partial file gone take a file of the right size at the destination for that publish.
    /// - Returns: `false` when the lease was lost.
    public func markPublishing(_ claim: Claim) throws -> Bool {
        try db.query(
            Statements.TransferLeases.markPublishing, [claim.info.id, claim.leaseToken, claim.generation]
        ).affectedRows == 1
    }

    /// Records that `--extract` finished, fenced by the finalizing lease.
    public func markExtracted(_ claim: Claim) throws {
        try db.query(
            Statements.TransferLeases.markExtracted, [claim.info.id, claim.leaseToken])
    }

    /// Records that the verified file is in place, with its digest, fenced by the finalizing lease.
    /// - Returns: `false` when the lease was lost.
    @discardableResult
    public func markPublished(_ claim: Claim, digest: String?) throws -> Bool {
        try db.query(
            Statements.TransferLeases.markPublished, [claim.info.id, claim.leaseToken, digest]
        ).affectedRows == 1
    }

    /// The digest recorded when the file was published (`algorithm:hex`), if one was.
    public func publishedDigest(of claim: Claim) throws -> String? {
        try db.query(Statements.TransferLeases.publishedDigest, [claim.info.id]).first?["computed_digest"]
    }

    /// Records a tus upload URL (so another finalizer resumes it) or the upload's answer.
    public func recordUpload(_ claim: Claim, url: String? = nil, result: String? = nil) throws {
        try db.query(
            Statements.TransferLeases.recordUpload,
            [claim.info.id, claim.leaseToken, url, result])
    }
}
