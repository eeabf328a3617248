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
        self.init(size: size, firstSegment: segmentSize, segmentSize: segmentSize)
    }

    /// Cuts `size` bytes into a first range of `firstSegment` (the probe's own) and then ranges
    /// of `segmentSize`, the last one shorter.
    public init(size: Int64, firstSegment: Int64, segmentSize: Int64) {
        precondition(size >= 0 && segmentSize > 0 && firstSegment > 0)
        var ranges: [Range] = []
        if size > 0 { ranges.append(Range(offset: 0, length: min(firstSegment, size))) }
        var offset: Int64 = ranges.first?.length ?? 0
        while offset < size {
            let length = min(segmentSize, size - offset)
            ranges.append(Range(offset: offset, length: length))
            offset += length
        }
        self.ranges = ranges
    }
}

extension SegmentPlan {
    /// The segment size Haul picks when none was given: a sixteenth of the file, between 8 MiB
    /// and 128 MiB, in whole MiB. Big files get fewer, longer requests (less claim and request
    /// overhead per byte); straggler splitting keeps the tail from waiting on one long segment.
    public static func automaticSegmentSize(fileSize: Int64) -> Int64 {
        let mib: Int64 = 1 << 20
        let sixteenth = (fileSize / 16 + mib - 1) / mib * mib
        return min(128 * mib, max(8 * mib, sixteenth))
    }
}
