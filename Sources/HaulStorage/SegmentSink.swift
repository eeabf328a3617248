import HaulCore

/// Where one segment's bytes go (`Storage.openSegment`): a file written at the segment's
/// offset (layout `inplace`), a part file of its own (`parts`), or an S3 part or `PutObject`.
/// The caller streams into it, checkpoints what `syncHandle` makes durable, and records what
/// `finish` returns; the sink itself records nothing. Owned by one thread.
public protocol SegmentSink: AnyObject {
    /// Bytes accepted since the sink was opened (buffered, written or sent); none once `drop`
    /// discarded an atomic segment's bytes.
    var bytesWritten: Int64 { get }
    /// Whether the segment's last byte stores the whole file at once (a `PutObject`), so that
    /// the caller holds it back until its lease is confirmed, then sends it.
    var lastByteCommits: Bool { get }
    /// The part file written, relative to the storage root, for the checkpoint's record
    /// (layout `parts`); `nil` otherwise.
    var partPath: String? { get }
    /// The open file to make durable before a checkpoint is recorded; `nil` when nothing is
    /// durable before `finish` (an atomic segment).
    var syncHandle: SyncHandle? { get }
    /// Takes bytes. While the storage is behind it waits, calling `whileWaiting` every quarter
    /// second, and stops (`interrupted`) once that returns false.
    func write(_ bytes: UnsafeRawBufferPointer, whileWaiting: () -> Bool) throws
    /// Writes out what is buffered, so that every byte taken is in the file (before a checkpoint).
    func flush() throws
    /// Completes the segment, calling `whileWaiting` while the storage answers.
    /// - Returns: what must be recorded of it.
    func finish(whileWaiting: () -> Void) throws -> SegmentReceipt
    /// Stops without completing: a file keeps what was written (a checkpoint may record it), an
    /// atomic segment's request is aborted and its bytes no longer count.
    func drop()
    /// Closes the sink (call `flush` and checkpoint first to keep the bytes).
    func close()
}

/// What a finished segment leaves to be recorded under its lease.
public struct SegmentReceipt: Sendable, Equatable {
    /// The stored part's ETag (S3), completing the upload later; `nil` for a file.
    public let etag: String?

    /// A receipt; `etag` for an S3 part.
    public init(etag: String?) { self.etag = etag }
}

/// What `Storage.openSegment` needs to know of a segment and its transfer (the worker's
/// `ClaimedSegment`, without the queue's types).
public struct SegmentTarget: Sendable {
    /// The transfer's destination, relative to the storage.
    public var dest: String
    /// Whether the transfer's layout is `parts` (each attempt writes a part file of its own).
    public var partFiles: Bool
    /// The transfer's generation (which partial file; a restart gets a new one).
    public var generation: Int
    /// The segment's index (an S3 part's number is `index + 1`).
    public var index: Int
    /// The offset of the segment's first byte in the file.
    public var offset: Int64
    /// The segment's length, `nil` when unknown.
    public var length: Int64?
    /// Bytes of the segment kept from earlier attempts: writing resumes after them.
    public var resumeAt: Int64
    /// The segment's lease token (names an attempt's part file).
    public var lease: String
    /// The transfer's URL (the mark on what is stored).
    public var url: String
    /// The transfer's size, when known.
    public var fileSize: Int64?
    /// The multipart upload its planner opened and recorded (S3), if any.
    public var uploadID: String?
    /// The origin's content type, stored with a `PutObject`.
    public var contentType: String?
    /// The expected digest (`algorithm:hex`), which a `PutObject` sends when it is a sha256.
    public var expectedDigest: String?
    /// Where a `haul get` keeps its partial files locked, if it does.
    public var holding: HeldPartials?
    /// Names the segment in messages (`segment 2 of transfer 7`).
    public var name: String
    /// What runs the transfer again, for hints.
    public var retryCommand: String

    /// A segment target; see the properties.
    public init(
        dest: String, partFiles: Bool, generation: Int, index: Int, offset: Int64, length: Int64?, resumeAt: Int64, lease: String, url: String,
        fileSize: Int64?, uploadID: String?, contentType: String?, expectedDigest: String?, holding: HeldPartials?, name: String, retryCommand: String
    ) {
        self.dest = dest
        self.partFiles = partFiles
        self.generation = generation
        self.index = index
        self.offset = offset
        self.length = length
        self.resumeAt = resumeAt
        self.lease = lease
        self.url = url
        self.fileSize = fileSize
        self.uploadID = uploadID
        self.contentType = contentType
        self.expectedDigest = expectedDigest
        self.holding = holding
        self.name = name
        self.retryCommand = retryCommand
    }
}
