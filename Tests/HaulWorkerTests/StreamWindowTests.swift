import HaulWorker
import Testing

/// The reorder buffer of `get -o -`: bytes out in file order whatever order the segments come
/// in, and never more held than the window allows.
@Suite("stream window")
struct StreamWindowTests {
    static let mib: Int64 = 1 << 20

    /// Adds `count` bytes of `value` to `segment`.
    @discardableResult
    static func receive(_ window: inout StreamWindow, _ segment: Int, _ count: Int, _ value: UInt8) -> Int {
        [UInt8](repeating: value, count: count).withUnsafeBytes { window.receive($0, segment: segment) }
    }

    /// Everything the writer can take now, joined.
    static func drain(_ window: inout StreamWindow) -> [UInt8] {
        var out: [UInt8] = []
        while let chunk = window.take() { out += chunk }
        return out
    }

    @Test("segments that arrive out of order come out in file order, from byte 0 as soon as it is in")
    func inOrder() {
        var window = StreamWindow(lengths: [4, 4, 2], window: 3, headHold: 4)
        #expect(window.claim() == .segment(0) && window.claim() == .segment(1) && window.claim() == .segment(2))
        #expect(window.claim() == .none)
        Self.receive(&window, 2, 2, 3)
        Self.receive(&window, 1, 4, 2)
        #expect(Self.drain(&window).isEmpty, "nothing before byte 0")
        Self.receive(&window, 0, 1, 1)
        #expect(Self.drain(&window) == [1], "the first byte goes out alone")
        Self.receive(&window, 0, 3, 1)
        #expect(Self.drain(&window) == [1, 1, 1, 2, 2, 2, 2, 3, 3])
        #expect(window.isFinished && window.written == 10 && window.heldBytes == 0)
    }

    @Test("bytes past a segment's end are not taken, and a cut segment resumes at its next byte")
    func segmentEnds() {
        var window = StreamWindow(lengths: [4, 4], window: 2, headHold: 4)
        _ = window.claim()
        _ = window.claim()
        #expect(Self.receive(&window, 0, 6, 1) == 4, "the first connection asked for the whole file")
        #expect(window.isComplete(0))
        Self.receive(&window, 1, 3, 2)
        #expect(!window.isComplete(1) && window.nextByte(of: 1) == 7 && window.lastByte(of: 1) == 7)
        Self.receive(&window, 1, 1, 2)
        #expect(Self.drain(&window) == [1, 1, 1, 1, 2, 2, 2, 2] && window.isFinished)
    }

    @Test("a paused reader: segments past the window wait, and the bytes held never pass the window's worth")
    func boundedWhileReaderPauses() {
        let plan = StreamPlan(size: 400 * Self.mib, connections: 4, hostLimit: 8, segmentSize: nil)
        var window = StreamWindow(plan: plan)
        let segment = Int(plan.segmentSize)
        var fetched: [Int] = []
        // Connections take every segment they may and fetch it whole; the reader takes nothing.
        while case .segment(let index) = window.claim() {
            fetched.append(index)
            if index > 0 { Self.receive(&window, index, segment, UInt8(index % 256)) }
        }
        #expect(window.claim() == .wait, "the window is full: the connections ahead wait")
        #expect(fetched.count == plan.window)
        // The segment being written holds at most a segment before its connection waits.
        while window.canReceive(0) { Self.receive(&window, 0, 65_536, 0) }
        #expect(window.peakHeldBytes <= StreamPlan.bufferLimit, "\(window.peakHeldBytes)")
        #expect(window.peakHeldBytes == Int64(plan.window) * plan.segmentSize)
        // A little taken moves nothing; the first segment taken whole moves the window by one.
        _ = window.take()
        #expect(window.claim() == .wait)
        #expect(Self.drain(&window).count == plan.window * segment - 65_536, "every segment held was whole")
        for index in plan.window..<(2 * plan.window) { #expect(window.claim() == .segment(index)) }
        #expect(window.claim() == .wait)
    }

    @Test("a body of unknown length is one segment that ends where its bytes end")
    func unknownLength() {
        var window = StreamWindow(lengths: [nil], window: 1, headHold: 4)
        #expect(window.claim() == .segment(0) && window.lastByte(of: 0) == nil)
        Self.receive(&window, 0, 4, 9)
        #expect(!window.canReceive(0), "the reader holds the connection back")
        #expect(Self.drain(&window) == [9, 9, 9, 9] && !window.isFinished)
        Self.receive(&window, 0, 2, 8)
        window.end(0)
        #expect(Self.drain(&window) == [8, 8] && window.isFinished)
    }

    @Test("plans: -x and the host limit bound the connections, and segments shrink to fit the buffer")
    func plans() {
        let forty = StreamPlan(size: 40 * Self.mib, connections: 4, hostLimit: 8, segmentSize: nil)
        #expect(forty.connections == 4 && forty.segmentSize == 8 * Self.mib && forty.ranges.count == 5 && forty.window == 5)
        let many = StreamPlan(size: 4 << 30, connections: 32, hostLimit: 8, segmentSize: nil)
        #expect(many.connections == 8 && many.segmentSize == 4 * Self.mib && many.window == 16)
        let given = StreamPlan(size: 1 << 30, connections: 2, hostLimit: 8, segmentSize: 1 << 30)
        #expect(given.segmentSize == 16 * Self.mib && given.window == 4)
        let small = StreamPlan(size: 3 * Self.mib, connections: 4, hostLimit: 8, segmentSize: nil)
        #expect(small.connections == 1 && small.ranges.count == 1, "a file within one segment uses one connection")
        for plan in [forty, many, given, small] {
            #expect(Int64(plan.window) * plan.segmentSize <= StreamPlan.bufferLimit)
            #expect(plan.ranges.map(\.length).reduce(0, +) == plan.ranges.last!.offset + plan.ranges.last!.length)
        }
    }
}
