/// What `Storage.segmentLength` needs of a file the planner cuts into segments (the plan,
/// without the queue's types).
public struct SegmentedFile: Sendable, Equatable {
    /// The destination, relative to the storage (for messages).
    public var dest: String
    /// The file's size; `nil` when the origin does not say (a body read to its end).
    public var size: Int64?
    /// Whether the origin serves ranges (else the file is one segment).
    public var acceptsRanges: Bool
    /// The length of the first segment, whose request is already streaming.
    public var first: Int64
    /// The segment length the transfer asks for.
    public var requested: Int64

    /// A file to cut; see the properties.
    public init(dest: String, size: Int64?, acceptsRanges: Bool, first: Int64, requested: Int64) {
        self.dest = dest
        self.size = size
        self.acceptsRanges = acceptsRanges
        self.first = first
        self.requested = requested
    }
}
