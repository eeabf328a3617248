/// How a file is cut into byte ranges. Pure, so it can be tested on any size.
public struct SegmentPlan: Equatable, Sendable {
    /// One range: the first byte and the number of bytes.
    public struct Range: Equatable, Sendable {
        /// Offset of the first byte in the file.
        public let offset: Int64
        /// Number of bytes, always at least one.
        public let length: Int64

        /// A range from its parts.
        public init(offset: Int64, length: Int64) {
            self.offset = offset
            self.length = length
        }
    }

    /// The ranges in file order; together they cover the file exactly once.
    public let ranges: [Range]

    /// Cuts `size` bytes into ranges of `segmentSize` (the last one shorter); an empty file has none.
    public init(size: Int64, segmentSize: Int64) {
        precondition(size >= 0 && segmentSize > 0)
        var ranges: [Range] = []
        var offset: Int64 = 0
        while offset < size {
            let length = min(segmentSize, size - offset)
            ranges.append(Range(offset: offset, length: length))
            offset += length
        }
        self.ranges = ranges
    }
}
