import HaulCore
import HaulPostgres

/// What `haul status`, `haul list`, `haul get` and the dashboard show of a transfer. Secrets
/// are already redacted (`Redaction.url`), and the text a peer chose (an origin's reason
/// phrase in `error`, its `ETag`) or a row recorded by an older version holds is made safe to
/// show (`SafeText.cleanLine`). `dest` is kept as recorded: it names the file.
public struct TransferStatus: Sendable {
    public let id: Int64
    public let url: String
    public let dest: String?
    public let state: TransferState
    /// Done without downloading: the origin said the copy on storage is current (re-mirror).
    public let unchanged: Bool
    public let size: Int64?
    public let bytesDone: Int64
    public let segmentCount: Int
    public let segmentsDone: Int
    public let segmentsRunning: Int
    public let error: String?
    public let errorCode: String?
    public let expectedDigest: String?
    public let computedDigest: String?
    public let etag: String?
    public let lastModified: String?
    public let priority: Int
    public let layout: StorageLayout
    /// The storage its file is on (`file:///ROOT`, `s3://BUCKET/PREFIX`); `nil` until it is planned.
    public let storage: String?
    public let attempts: Int
    /// How many times the transfer started over; it names the partial file (`TransferFiles.partial`).
    public let generation: Int
    /// Average bytes per second since the first byte, while downloading.
    public let rate: Double?
    public let createdAt: String
    public let finishedAt: String?
    /// Seconds until the next attempt of a transfer or segment that failed and waits to be retried.
    public let retryIn: Double?
    /// Why that attempt failed.
    public let retryReason: String?
    /// The worker whose batch claim holds this small file while it is fetched, though its state
    /// still reads `pending` (`TransferLeases.restClaim`); `nil` otherwise.
    public let claimedBy: String?

    /// Whether the origin gave no ETag and no `Last-Modified`: a new version of the file is then
    /// noticed only by its size (and by the digest, when one was given). `nil` until a probe
    /// learned the size.
    public var hasNoValidator: Bool? {
        guard size != nil else { return nil }
        return etag == nil && lastModified == nil
    }

    init(_ row: PostgresRow) throws {
        id = try row.int64("id")
        url = SafeText.cleanLine(Redaction.url(try row.string("url")))
        dest = row["dest"]
        state = TransferState(rawValue: try row.string("state")) ?? .failed
        unchanged = try row.bool("unchanged")
        size = try row.optionalInt64("size")
        bytesDone = try row.int64("bytes_done")
        segmentCount = try row.int("segments")
        segmentsDone = try row.int("done")
        segmentsRunning = try row.int("running")
        error = row["error"].map(SafeText.cleanLine)
        errorCode = row["error_code"]
        expectedDigest = row["expected_digest"]
        computedDigest = row["computed_digest"]
        etag = row["etag"].map(SafeText.cleanLine)
        lastModified = row["last_modified"].map(SafeText.cleanLine)
        priority = try row.int("priority")
        layout = try StorageLayout(recorded: row.string("layout"))
        storage = row["storage"]
        attempts = try row.int("attempts")
        generation = try row.int("generation")
        rate = try row.optionalDouble("rate")
        createdAt = try row.string("created_at")
        finishedAt = row["finished_at"]
        retryIn = try row.optionalDouble("retry_in")
        retryReason = row["retry_reason"].map(SafeText.cleanLine)
        claimedBy = row["claimed_by"].map(SafeText.cleanLine)
    }
}

/// What a progress line sums of a transfer (`TransferStore.progress`): the part of its status
/// that a list's running totals need.
public struct TransferProgress: Sendable {
    public let id: Int64
    public let state: TransferState
    /// `nil` until a probe learned it.
    public let size: Int64?
    /// Bytes saved, as `TransferStatus.bytesDone` counts them.
    public let bytesDone: Int64

    init(_ row: PostgresRow) throws {
        id = try row.int64("id")
        state = TransferState(rawValue: try row.string("state")) ?? .failed
        size = try row.optionalInt64("size")
        bytesDone = try row.int64("bytes_done")
    }
}
