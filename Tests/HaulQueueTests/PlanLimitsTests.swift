import HaulCore
import HaulQueue
import Testing

@Suite("plan limits")
struct PlanLimitsTests {
    @Test("a plan never has more than 10 000 segments, whatever the size announced")
    func segmentCap() {
        var generator = SystemRandomNumberGenerator()
        let sizes: [Int64] =
            [Int64.max, Int64.max - 1, 1 << 62, 10_000 * (8 << 20) + 1, 1 << 40] + (0..<300).map { _ in Int64.random(in: 0...Int64.max, using: &generator) }
        for size in sizes {
            let first = Int64.random(in: PlanLimits.minimumSegmentSize...(64 << 20), using: &generator)
            let wanted = Int64.random(in: PlanLimits.minimumSegmentSize...(128 << 20), using: &generator)
            let rest = PlanLimits.segmentSize(fileSize: size, first: first, rest: wanted)
            #expect(rest >= wanted)
            let plan = SegmentPlan(size: size, firstSegment: first, segmentSize: rest)
            #expect(plan.ranges.count <= Int(PlanLimits.maximumSegments), "size \(size)")
            #expect(plan.ranges.reduce(0 as Int64) { $0 + $1.length } == size)
        }
    }

    @Test("segments keep their size while the cap is not reached")
    func noGrowthBelowTheCap() {
        let mib: Int64 = 1 << 20
        #expect(PlanLimits.segmentSize(fileSize: 1 << 30, first: 8 * mib, rest: 8 * mib) == 8 * mib)
        #expect(PlanLimits.segmentSize(fileSize: 8 * mib * 10_000, first: 8 * mib, rest: 8 * mib) == 8 * mib)
        #expect(PlanLimits.segmentSize(fileSize: 8 * mib * 10_000 + 1, first: 8 * mib, rest: 8 * mib) == 8 * mib + 1)
        #expect(PlanLimits.segmentSize(fileSize: 100, first: 8 * mib, rest: 8 * mib) == 8 * mib)
    }

    @Test("a file bigger than --max-file-size or the storage is refused; bigger than the free space, retried")
    func sizeLimits() throws {
        let limits = PlanLimits(maxFileSize: 10 << 20, freeSpace: 5 << 30, capacity: 6 << 30)
        try limits.check(size: 10 << 20)
        let tooBig = #expect(throws: HaulError.self) { try limits.check(size: (10 << 20) + 1) }
        #expect(tooBig?.code == .tooLarge && tooBig?.isTransient == false)
        let never = #expect(throws: HaulError.self) { try PlanLimits(freeSpace: 1 << 30, capacity: 2 << 30).check(size: Int64.max) }
        #expect(never?.code == .tooLarge && never?.isTransient == false)
        #expect(never?.message.contains("more than the whole storage holds") == true)
        let full = #expect(throws: HaulError.self) { try PlanLimits(freeSpace: 1 << 30, capacity: 2 << 30).check(size: 3 << 29) }
        #expect(full?.code == .storageFull && full?.isTransient == true)
        // Not "full": the storage has room, only not enough; the message says how much, and the hint how much more is needed.
        #expect(full?.message == "not enough free space: the origin announced 1.5 GiB (1610612736 bytes) and 1.0 GiB are free on the storage")
        #expect(full?.hint == "free 512.0 MiB more on the storage root")
        try PlanLimits().check(size: Int64.max)
        #expect(limits.bodyLimit?.bytes == 10 << 20 && limits.bodyLimit?.transient == false)
        #expect(PlanLimits(maxFileSize: 9, freeSpace: 7).bodyLimit?.bytes == 7 && PlanLimits(freeSpace: 7).bodyLimit?.transient == true)
        #expect(PlanLimits().bodyLimit == nil)
    }

    @Test("segment sizes under 64 KiB are refused as usage errors")
    func segmentFloor() throws {
        try PlanLimits.validateSegmentSize(64 << 10)
        let error = #expect(throws: HaulError.self) { try PlanLimits.validateSegmentSize((64 << 10) - 1) }
        #expect(error?.code == .usage)
    }
}
