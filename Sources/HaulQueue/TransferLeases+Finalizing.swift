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
            """
            SELECT published_at IS NOT NULL AS published, coalesce(publishing_generation = $2, false) AS publishing,
                   extracted_at IS NOT NULL AS extracted, upload_url
            FROM transfers WHERE id = $1
            """, [claim.info.id, claim.generation]
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
            "UPDATE transfers SET publishing_generation = $3 WHERE id = $1 AND lease_token = $2::uuid", [claim.info.id, claim.leaseToken, claim.generation]
        ).affectedRows == 1
    }

    /// Records that `--extract` finished, fenced by the finalizing lease.
    public func markExtracted(_ claim: Claim) throws {
        try db.query(
            "UPDATE transfers SET extracted_at = now(), updated_at = now() WHERE id = $1 AND lease_token = $2::uuid", [claim.info.id, claim.leaseToken])
    }

    /// Records that the verified file is in place, with its digest, fenced by the finalizing lease.
    /// - Returns: `false` when the lease was lost.
    @discardableResult
    public func markPublished(_ claim: Claim, digest: String?) throws -> Bool {
        try db.query(
            """
            UPDATE transfers
            SET computed_digest = $3, published_at = now(), updated_at = now()
            WHERE id = $1
              AND lease_token = $2::uuid
            """, [claim.info.id, claim.leaseToken, digest]
        ).affectedRows == 1
    }

    /// The digest recorded when the file was published (`algorithm:hex`), if one was.
    public func publishedDigest(of claim: Claim) throws -> String? {
        try db.query("SELECT computed_digest FROM transfers WHERE id = $1", [claim.info.id]).first?["computed_digest"]
    }

    /// Records a tus upload URL (so another finalizer resumes it) or the upload's answer.
    public func recordUpload(_ claim: Claim, url: String? = nil, result: String? = nil) throws {
        try db.query(
            "UPDATE transfers SET upload_url = coalesce($3, upload_url), upload_result = coalesce($4, upload_result), updated_at = now() WHERE id = $1 AND lease_token = $2::uuid",
            [claim.info.id, claim.leaseToken, url, result])
    }
}
