import HaulQueue

/// How `haul get URL -o -` cuts a file it streams over several connections: segments small
/// enough that the reorder buffer of the ones fetched ahead stays within ``bufferLimit``. Pure.
public struct StreamPlan: Equatable, Sendable {
    /// The most bytes held in memory for segments fetched ahead of the one being written: the
    /// reorder buffer's cap (64 MiB).
    public static let bufferLimit: Int64 = 64 << 20

    /// The segments in file order; the first is fetched by the connection that asked for the
    /// whole file, which stops at its end.
    public let ranges: [SegmentPlan.Range]
    /// Connections at work at once.
    public let connections: Int
    /// Segments fetched or held at once, counting the one being written: ``bufferLimit`` over
    /// the segment size, at least `connections`.
    public let window: Int

    /// The plan of a file of `size` bytes.
    /// - Parameters:
    ///   - connections: `-x`, the connections asked for.
    ///   - hostLimit: the most connections to one host.
    ///   - segmentSize: `--segment-size` if given; else get's automatic size. Either is cut to
    ///     ``bufferLimit`` over twice the connections, so that a window holds two segments per
    ///     connection.
    public init(size: Int64, connections: Int, hostLimit: Int, segmentSize: Int64?) {
        precondition(size > 0 && connections > 0 && hostLimit > 0)
        let wanted = min(connections, hostLimit)
        let ceiling = max(PlanLimits.minimumSegmentSize, Self.bufferLimit / Int64(2 * wanted))
        let chosen = min(segmentSize ?? SegmentPlan.automaticSegmentSize(fileSize: size), ceiling)
        ranges = SegmentPlan(size: size, segmentSize: chosen).ranges
        self.connections = min(wanted, ranges.count)
        window = min(ranges.count, max(self.connections, Int(Self.bufferLimit / chosen)))
    }

    /// The segment size (the length of every segment but the last).
    public var segmentSize: Int64 { ranges[0].length }
}
