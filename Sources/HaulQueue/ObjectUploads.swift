import HaulCore
import HaulPostgres

/// The rows behind S3 storage: a transfer's multipart upload id and its parts' ETags.
extension TransferLeases {
    /// Records the multipart upload a planner opened for `claim` (and marks the transfer's
    /// layout `s3`), under the planning lease. - Returns: false if the lease was lost.
    public func recordObjectUpload(_ claim: Claim, uploadID: String) throws -> Bool {
        try db.query(
            Statements.ObjectUploads.recordObjectUpload(s3Layout: StorageLayout.s3.rawValue),
            [claim.info.id, claim.leaseToken, uploadID]
        ).affectedRows == 1
    }

    /// The ETag recorded for each segment of the claim's generation, by segment index (`nil`: none yet).
    public func partETags(of claim: Claim) throws -> [(index: Int, etag: String?)] {
        try db.query(Statements.ObjectUploads.partETags, [claim.info.id, claim.generation])
            .rows.map { (try $0.int("idx"), $0["part_etag"]) }
    }

    /// Forgets the upload once it is completed, under the finalizing lease.
    public func forgetObjectUpload(_ claim: Claim) throws {
        try db.query(Statements.ObjectUploads.forgetOwnUpload, [claim.info.id, claim.leaseToken])
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
            Statements.ObjectUploads.abandoned(owned: scope.owns("owner", worker: "$2")), [limit, workerID]
        ).rows.map { Abandoned(transferID: try $0.int64("id"), dest: try $0.string("dest"), uploadID: try $0.string("object_upload_id")) }
    }

    /// Forgets `uploadID` of a transfer once it is aborted (unless a new one replaced it).
    public static func forget(_ db: PostgresConnection, transferID: Int64, uploadID: String) throws {
        try db.query(Statements.ObjectUploads.forget, [transferID, uploadID])
    }

    /// Records that an upload of `key` in `bucket` is about to be opened (before
    /// `CreateMultipartUpload`), so that the sweep can tell it for Haul's own if its opener dies
    /// before recording its id. - Returns: the record's id, for `settle`.
    public static func intend(_ db: PostgresConnection, bucket: String, key: String) throws -> Int64 {
        try db.query(Statements.ObjectUploads.intend, [bucket, key]).rows[0].int64("id")
    }

    /// Deletes intent `id` once the upload's id is recorded (or it was never opened).
    public static func settle(_ db: PostgresConnection, intent id: Int64) throws {
        try db.query(Statements.ObjectUploads.settle, [id])
    }

    /// Deletes the intents of `bucket` older than `seconds`: any upload they announced was old
    /// enough for the sweep long ago.
    public static func pruneIntents(_ db: PostgresConnection, bucket: String, olderThan seconds: Double) throws {
        try db.query(Statements.ObjectUploads.pruneIntents, [bucket, seconds])
    }

    /// What the database knows of the uploads open at `keys` of `bucket`.
    public static func known(_ db: PostgresConnection, bucket: String, keys: [String]) throws -> UploadKnowledge {
        var known = UploadKnowledge()
        let ids = try db.query(
            Statements.ObjectUploads.knownUploads)
        for row in ids.rows {
            let id = try row.string("id")
            if row["stopped"] == "t", let transfer = row["transfer"].flatMap({ Int64($0) }) { known.stopped[id] = transfer } else { known.live.insert(id) }
        }
        guard !keys.isEmpty else { return known }
        let begun = try db.query(
            Statements.ObjectUploads.begunKeys, [bucket, keys])
        for row in begun.rows {
            guard let at = row["at"].flatMap({ Double($0) }) else { continue }
            known.begun[try row.string("key"), default: []].append(at)
        }
        return known
    }
}

/// What the database knows of the multipart uploads open under a storage prefix: the only
/// uploads the sweep may abort are the ones it can tell for Haul's own from this.
public struct UploadKnowledge: Sendable, Equatable {
    /// Upload ids of live transfers and of extraction entries: never aborted.
    public var live: Set<String> = []
    /// Upload ids recorded by canceled and failed transfers (of any worker or `haul get`), by
    /// transfer id: no one will complete them.
    public var stopped: [String: Int64] = [:]
    /// When Haul was about to open an upload at a key (an intent, or an extraction entry's
    /// record), in seconds since 1970, by key.
    public var begun: [String: [Double]] = [:]

    public init() {}

    /// How far apart the store's and the database's clocks may be, and how long an opener may
    /// take from its intent to `CreateMultipartUpload`, for an upload to count as the intent's.
    public static let window: Double = 600

    /// What the sweep does with an upload open at `key` with id `uploadID`, begun at `initiated`
    /// (seconds since 1970, the store's clock), at `now`, after `grace` seconds.
    public func verdict(key: String, uploadID: String, initiated: Double?, now: Double, grace: Double) -> UploadVerdict {
        if live.contains(uploadID) { return .keep }
        if let transfer = stopped[uploadID] { return .abortStopped(transfer) }
        guard let initiated, now - initiated > grace else { return .keep }
        let announced = begun[key, default: []].contains { abs(initiated - $0) <= Self.window }
        return announced ? .abortOrphan : .keep
    }
}

/// The sweep's decision on one open upload.
public enum UploadVerdict: Sendable, Equatable {
    /// Not Haul's, or still in use, or too young: left open.
    case keep
    /// Recorded by this stopped transfer: aborted and forgotten.
    case abortStopped(Int64)
    /// Opened by a Haul planner or extraction that died before recording it: aborted.
    case abortOrphan
}
