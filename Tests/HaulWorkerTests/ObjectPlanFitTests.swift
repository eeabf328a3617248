import HaulCore
import HaulQueue
import HaulS3Storage
import Testing

@testable import HaulWorker

/// The planner's cut of a file into S3 parts (`ObjectStore.fit`), on the ranges it writes.
@Suite("S3 plan fitting")
struct ObjectPlanFitTests {
    static let mib: Int64 = 1 << 20

    static func plan(size: Int64) -> TransferLeases.Plan {
        TransferLeases.Plan(
            dest: "big.bin", host: "origin", size: size, etag: nil, lastModified: nil, contentType: nil, acceptsRanges: true,
            ranges: [SegmentPlan.Range(offset: 0, length: size)], unknownLength: false)
    }

    @Test("sizes that used to need 10 001 parts are cut into at most 10 000 of 5 MiB to 5 GiB covering the file")
    func tenThousandParts() throws {
        for size in [90_000 * Self.mib, 78 << 30, 80_000 * Self.mib + 1, 100_000 * Self.mib - 1, 1 << 40, 5 << 40] {
            let ranges = try ObjectStore.fit(Self.plan(size: size), first: 8 * Self.mib, requested: 8 * Self.mib).ranges
            #expect(ranges.count <= 10_000, "\(size) bytes: \(ranges.count) parts")
            #expect(ranges.first?.length == 8 * Self.mib)
            #expect(ranges.dropLast().allSatisfy { $0.length >= 5 * Self.mib && $0.length <= 5 << 30 })
            #expect(ranges.map(\.length).reduce(0, +) == size)
            #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.offset + $0.length == $1.offset })
        }
    }

    @Test("a file larger than 5 TiB is refused before any upload is opened")
    func tooLarge() {
        #expect {
            try ObjectStore.fit(Self.plan(size: (5 << 40) + 1), first: 8 * Self.mib, requested: 8 * Self.mib)
        } throws: { error in
            (error as? HaulError)?.code == .s3TooLarge && "\(error)".contains("5 TiB")
        }
    }
}
