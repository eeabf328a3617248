/// The reorder buffer of `haul get URL -o -`: connections fetch segments in any order, and the
/// bytes come out strictly in file order from byte 0. Segments are handed out only within a
/// window ahead of the one being written, so what is held for them is bounded by the window;
/// the segment being written holds at most `headHold` bytes not yet taken, after which its
/// connection waits for the reader. Pure: its owner locks it and waits when it says so.
public struct StreamWindow {
    /// What a connection is to do next.
    public enum Claim: Equatable, Sendable {
        /// Fetch this segment.
        case segment(Int)
        /// Wait: the window is full until the segment being written is done.
        case wait
        /// Nothing is left to fetch.
        case none
    }

    /// Each segment's length; `nil` while unknown (the one segment of a file of unknown size).
    private var lengths: [Int64?]
    /// Each segment's first byte in the file.
    private let offsets: [Int64]
    /// Segments handed out or held at once, counting the one being written.
    public let window: Int
    /// The most bytes the segment being written holds before its connection waits.
    public let headHold: Int64
    /// The segment being written.
    public private(set) var head = 0
    /// Segments handed out so far (they are handed out in order).
    private var claimed = 0
    /// Bytes received of each segment, taken or not.
    private var received: [Int64]
    /// Bytes received and not taken yet, by segment, in order.
    private var held: [Int: [[UInt8]]] = [:]
    private var heldInSegment: [Int: Int64] = [:]
    /// Bytes received and not taken yet, in all.
    public private(set) var heldBytes: Int64 = 0
    /// The most ``heldBytes`` ever were.
    public private(set) var peakHeldBytes: Int64 = 0
    /// Bytes taken so far: the file's first `written` bytes.
    public private(set) var written: Int64 = 0

    /// A window over segments of `lengths` (only a single segment's may be `nil`).
    public init(lengths: [Int64?], window: Int, headHold: Int64) {
        precondition(window > 0 && headHold > 0 && (lengths.count == 1 || !lengths.contains(nil)))
        self.lengths = lengths
        var offsets: [Int64] = []
        var next: Int64 = 0
        for length in lengths {
            offsets.append(next)
            next += length ?? 0
        }
        self.offsets = offsets
        self.window = window
        self.headHold = headHold
        received = Array(repeating: 0, count: lengths.count)
    }

    /// The window of a plan: its segments, its window, and a segment's worth held at the head.
    public init(plan: StreamPlan) {
        self.init(lengths: plan.ranges.map(\.length), window: plan.window, headHold: plan.segmentSize)
    }

    /// The next segment to fetch, in file order, within the window.
    public mutating func claim() -> Claim {
        guard claimed < lengths.count else { return .none }
        guard claimed < head + window else { return .wait }
        claimed += 1
        return .segment(claimed - 1)
    }

    /// The first byte of `segment` not received yet (where a cut connection resumes).
    public func nextByte(of segment: Int) -> Int64 { offsets[segment] + received[segment] }

    /// The last byte of `segment`, when its length is known.
    public func lastByte(of segment: Int) -> Int64? { lengths[segment].map { offsets[segment] + $0 - 1 } }

    /// Whether every byte of `segment` was received.
    public func isComplete(_ segment: Int) -> Bool { lengths[segment] == received[segment] }

    /// Whether `segment` may take more bytes now; `false` only for the segment being written
    /// while it holds ``headHold`` bytes the reader has not taken.
    public func canReceive(_ segment: Int) -> Bool { segment != head || heldInSegment[segment, default: 0] < headHold }

    /// Adds `bytes`, the next ones of `segment`. - Returns: how many were added: fewer when
    /// the segment ends within them.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, segment: Int) -> Int {
        precondition(segment >= head && segment < claimed, "segment \(segment) was not handed out or is done")
        let room = lengths[segment].map { $0 - received[segment] } ?? Int64.max
        let count = Int(min(Int64(bytes.count), room))
        guard count > 0 else { return 0 }
        held[segment, default: []].append([UInt8](UnsafeRawBufferPointer(rebasing: bytes[0..<count])))
        heldInSegment[segment, default: 0] += Int64(count)
        received[segment] += Int64(count)
        heldBytes += Int64(count)
        peakHeldBytes = max(peakHeldBytes, heldBytes)
        return count
    }

    /// Ends a segment of unknown length where its bytes ended.
    public mutating func end(_ segment: Int) {
        lengths[segment] = received[segment]
        advance()
    }

    /// The next bytes in file order, or `nil` when the segment being written has none yet.
    public mutating func take() -> [UInt8]? {
        advance()
        guard head < lengths.count, var chunks = held[head], !chunks.isEmpty else { return nil }
        let chunk = chunks.removeFirst()
        held[head] = chunks
        heldInSegment[head, default: 0] -= Int64(chunk.count)
        heldBytes -= Int64(chunk.count)
        written += Int64(chunk.count)
        advance()
        return chunk
    }

    /// The number of segments.
    public var count: Int { lengths.count }

    /// Whether every segment was received and taken.
    public var isFinished: Bool { head == lengths.count }

    /// Moves past segments received and taken in full.
    private mutating func advance() {
        while head < lengths.count, isComplete(head), held[head]?.isEmpty ?? true {
            held[head] = nil
            heldInSegment[head] = nil
            head += 1
        }
    }
}
