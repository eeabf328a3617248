import HaulCore

/// A transfer whose segments are all done, as `Storage.publish` needs it (the worker's claim
/// and its recorded segments, without the queue's types).
public struct FinishedFile: Sendable {
    /// The destination, relative to the storage.
    public var dest: String
    /// Whether the layout is `parts` (the file is assembled from part files).
    public var partFiles: Bool
    /// The transfer's generation.
    public var generation: Int
    /// The finalizing lease's token (names this finalizer's own assembly file).
    public var lease: String
    /// The transfer's URL (the mark on what is stored).
    public var url: String
    /// The size the origin announced, if it did.
    public var announcedSize: Int64?
    /// The segments of the generation, in order, with what was recorded of each.
    public var segments: [StoredSegment]
    /// The multipart upload the planner opened (S3), if any is still recorded.
    public var uploadID: String?
    /// The origin's content type.
    public var contentType: String?
    /// The digest to compute of the stored bytes, when one is expected or asked for.
    public var digestAlgorithm: Checksum.Algorithm?
    /// Whether a digest is expected (a mismatch is then possible and what is replaced is kept
    /// until the new file is verified).
    public var expectsDigest: Bool
    /// An earlier finalizer recorded that it set out to publish this generation
    /// (`PublishEvent.publishing`), so a file at the destination may be its.
    public var markedPublishing: Bool
    /// Where a `haul get` keeps its partial files locked, if it does.
    public var holding: HeldPartials?
    /// The transfer's id (names a copy kept aside while a replacement is verified).
    public var transferID: Int64
    /// What runs the transfer again, for hints.
    public var retryCommand: String

    /// A finished file; see the properties.
    public init(
        dest: String, partFiles: Bool, generation: Int, lease: String, url: String, announcedSize: Int64?, segments: [StoredSegment], uploadID: String?,
        contentType: String?, digestAlgorithm: Checksum.Algorithm?, expectsDigest: Bool, markedPublishing: Bool, holding: HeldPartials?, transferID: Int64,
        retryCommand: String
    ) {
        self.dest = dest
        self.partFiles = partFiles
        self.generation = generation
        self.lease = lease
        self.url = url
        self.announcedSize = announcedSize
        self.segments = segments
        self.uploadID = uploadID
        self.contentType = contentType
        self.digestAlgorithm = digestAlgorithm
        self.expectsDigest = expectsDigest
        self.markedPublishing = markedPublishing
        self.holding = holding
        self.transferID = transferID
        self.retryCommand = retryCommand
    }
}

/// A done segment as its checkpoints recorded it.
public struct StoredSegment: Sendable {
    /// Its index.
    public var index: Int
    /// Its length, and the bytes recorded as done of it.
    public var length: Int64
    public var bytesDone: Int64
    /// Its part files (layout `parts`): path relative to the storage, offset in the file, length.
    public var parts: [StoredPart]
    /// Its S3 part's ETag (`SegmentReceipt.etag`), if one was recorded.
    public var etag: String?

    /// A segment; see the properties.
    public init(index: Int, length: Int64, bytesDone: Int64, parts: [StoredPart], etag: String?) {
        self.index = index
        self.length = length
        self.bytesDone = bytesDone
        self.parts = parts
        self.etag = etag
    }
}

/// One part file of a segment (layout `parts`).
public struct StoredPart: Sendable {
    /// Its path relative to the storage root, as recorded.
    public var path: String
    /// Where its bytes go in the file, and how many.
    public var offset: Int64
    public var length: Int64

    /// A part file.
    public init(path: String, offset: Int64, length: Int64) {
        self.path = path
        self.offset = offset
        self.length = length
    }
}
