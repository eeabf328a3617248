/// What `Storage.prepare` needs of a transfer whose plan is about to be written (the planner's
/// claim and plan, without the queue's types).
public struct PlannedFile: Sendable {
    /// The destination, relative to the storage.
    public var dest: String
    /// The transfer's generation.
    public var generation: Int
    /// The transfer's URL (the mark on what is stored).
    public var url: String
    /// The file's size, when known.
    public var size: Int64?
    /// Whether the size is unknown (a body read to its end).
    public var unknownLength: Bool
    /// Whether the plan has segments (an empty file has none).
    public var hasSegments: Bool
    /// Whether the transfer's layout is `inplace` (one partial file sized up front).
    public var inplace: Bool
    /// The origin's content type.
    public var contentType: String?
    /// The multipart upload an earlier plan opened (S3), and that plan's destination.
    public var earlierUploadID: String?
    public var earlierDest: String?
    /// Where a `haul get` keeps its partial files locked, if it does.
    public var holding: HeldPartials?

    /// A planned file; see the properties.
    public init(
        dest: String, generation: Int, url: String, size: Int64?, unknownLength: Bool, hasSegments: Bool, inplace: Bool, contentType: String?,
        earlierUploadID: String?, earlierDest: String?, holding: HeldPartials?
    ) {
        self.dest = dest
        self.generation = generation
        self.url = url
        self.size = size
        self.unknownLength = unknownLength
        self.hasSegments = hasSegments
        self.inplace = inplace
        self.contentType = contentType
        self.earlierUploadID = earlierUploadID
        self.earlierDest = earlierDest
        self.holding = holding
    }
}

/// What `Storage.prepare` made, to be recorded under the planning lease.
public struct PreparedFile: Sendable, Equatable {
    /// The destination it was made for.
    public let dest: String
    /// The multipart upload it opened (S3), `nil` when none.
    public let uploadID: String?

    /// What was prepared for `dest`.
    public init(dest: String, uploadID: String?) {
        self.dest = dest
        self.uploadID = uploadID
    }
}

/// What a storage is about to make that must be known for Haul's own should the maker die
/// before recording it (an S3 multipart upload at a key): the planner records it first.
public struct StorageIntent: Sendable, Equatable {
    /// The bucket.
    public let container: String
    /// The key.
    public let name: String

    /// An intent to make `name` in `container`.
    public init(container: String, name: String) {
        self.container = container
        self.name = name
    }
}
