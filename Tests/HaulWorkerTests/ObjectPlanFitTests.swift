import Foundation
import HaulCore
import HaulQueue
import HaulS3
import HaulS3Storage
import HaulStorage
import Testing

@testable import HaulWorker

/// The planner's cut of a file into S3 parts (`Storage.segmentLength`, `WorkerConfig.fitted`),
/// on the ranges it writes.
@Suite("S3 plan fitting")
struct ObjectPlanFitTests {
    static let mib: Int64 = 1 << 20

    static func plan(size: Int64, acceptsRanges: Bool = true) -> TransferLeases.Plan {
        TransferLeases.Plan(
            dest: "big.bin", host: "origin", size: size, etag: nil, lastModified: nil, contentType: nil, acceptsRanges: acceptsRanges,
            ranges: [SegmentPlan.Range(offset: 0, length: size)], unknownLength: false)
    }

    /// A bucket that is never asked: fitting is arithmetic.
    static func bucket() throws -> ObjectStore {
        let config = S3Config(endpoint: "http://127.0.0.1:9", region: "us-east-1", credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"))
        return ObjectStore(
            location: try S3Location(parsing: "s3://fit/", what: "the test"), client: S3Client(config: config),
            scratch: try ScratchFolder(prefix: "haul-fit"))
    }

    static func fit(_ plan: TransferLeases.Plan, on storage: any Storage) throws -> [SegmentPlan.Range] {
        try WorkerConfig.fitted(plan, to: storage, first: 8 * mib, requested: 8 * mib).ranges
    }

    @Test("sizes that used to need 10 001 parts are cut into at most 10 000 of 5 MiB to 5 GiB covering the file")
    func tenThousandParts() throws {
        let bucket = try Self.bucket()
        for size in [90_000 * Self.mib, 78 << 30, 80_000 * Self.mib + 1, 100_000 * Self.mib - 1, 1 << 40, 5 << 40] {
            let ranges = try Self.fit(Self.plan(size: size), on: bucket)
            #expect(ranges.count <= 10_000, "\(size) bytes: \(ranges.count) parts")
            #expect(ranges.first?.length == 8 * Self.mib)
            #expect(ranges.dropLast().allSatisfy { $0.length >= 5 * Self.mib && $0.length <= 5 << 30 })
            #expect(ranges.map(\.length).reduce(0, +) == size)
            #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.offset + $0.length == $1.offset })
        }
    }

    @Test("a file larger than 5 TiB is refused before any upload is opened")
    func tooLarge() throws {
        let bucket = try Self.bucket()
        #expect {
            try Self.fit(Self.plan(size: (5 << 40) + 1), on: bucket)
        } throws: { error in
            (error as? HaulError)?.code == .s3TooLarge && "\(error)".contains("5 TiB")
        }
    }

    @Test("a folder keeps the plan's own segments, and holds what a bucket refuses")
    func folderKeepsPlan() throws {
        let folder = FolderStorage(root: try StorageRoot("/tmp"))
        let whole = Self.plan(size: 6 << 30, acceptsRanges: false)
        #expect(try Self.fit(whole, on: folder) == whole.ranges)
        #expect(throws: HaulError.self) { try Self.fit(whole, on: try Self.bucket()) }
    }
}
