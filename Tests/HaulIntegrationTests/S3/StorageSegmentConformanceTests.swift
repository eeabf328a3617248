import Foundation
import HaulArchive
import HaulCore
import HaulS3
import HaulS3Storage
import HaulStorage
import HaulTestSupport
import Testing

/// The `Storage` protocol's segment sinks and publishing, the same contract on a folder in both
/// layouts and on a bucket of the test SeaweedFS: ranges written out of order, a segment resumed
/// after reopening, nothing at the name before publishing and the exact bytes after, a file at
/// the name that is not the transfer's left alone, and the published file discarded.
@Suite struct StorageSegmentConformanceTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case inplace, parts, bucket
        var testDescription: String { rawValue }
    }

    static let url = "http://origin.test/file.bin"
    /// Two segments: an S3 part at its minimum, then a short last one.
    static let firstLength = 5 << 20
    static let bytes: [UInt8] = (0..<(firstLength + 1000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }

    /// A backend under test, with what its planner would have prepared for one transfer.
    struct Fixture {
        let kind: Kind
        let storage: any Storage
        let place: (String, String) throws -> Void

        init(_ kind: Kind) throws {
            self.kind = kind
            let base = try StorageConformanceTests.Fixture(kind == .bucket ? .bucket : .folder)
            storage = base.storage
            place = base.place
        }

        /// What the planner has the storage do before segments are written (`Storage.prepare`):
        /// size the partial file in place, or open the multipart upload, after saying so.
        /// - Returns: the upload's id, if one was opened.
        func prepare(_ dest: String) throws -> String? {
            let planned = PlannedFile(
                dest: dest, generation: 0, url: url, size: Int64(bytes.count), unknownLength: false, hasSegments: true, inplace: kind == .inplace,
                contentType: nil, earlierUploadID: nil, earlierDest: nil, holding: nil)
            var intents: [StorageIntent] = []
            let prepared = try storage.prepare(planned) { intents.append($0) }
            #expect(prepared.dest == dest)
            #expect(intents.count == (prepared.uploadID == nil ? 0 : 1))
            return prepared.uploadID
        }

        var bytes: [UInt8] { StorageSegmentConformanceTests.bytes }
    }

    /// The fence of a finalizer as the test plays it: what is recorded, and others' files refused
    /// unless marked as this URL's (`OthersFiles`' rule for a fleet transfer).
    final class Fence: PublishFence {
        let storage: any Storage
        let dest: String
        var events: [PublishEvent] = []
        init(storage: any Storage, dest: String) {
            self.storage = storage
            self.dest = dest
        }
        var isLost: Bool { false }
        func check() throws {}
        func renew() throws {}
        func refuseOthers() throws {
            guard let found = try storage.occupant(of: dest, url: StorageSegmentConformanceTests.url), found.mark != .thisURL else { return }
            throw HaulError(.destinationExists, "\(found.location) is someone else's")
        }
        func record(_ event: PublishEvent) throws { events.append(event) }
        func verify(_ actual: Checksum) throws -> String? { actual.description }
    }

    /// Segment `index` of the fixture's file, resuming after `resumeAt` bytes, in attempt `lease`.
    static func target(_ fixture: Fixture, dest: String, index: Int, uploadID: String?, resumeAt: Int64 = 0, lease: String) -> SegmentTarget {
        let offset = index == 0 ? 0 : Int64(firstLength)
        let length = index == 0 ? Int64(firstLength) : Int64(bytes.count - firstLength)
        return SegmentTarget(
            dest: dest, partFiles: fixture.kind == .parts, generation: 0, index: index, offset: offset, length: length, resumeAt: resumeAt, lease: lease,
            url: url, fileSize: Int64(bytes.count), uploadID: uploadID, contentType: nil, expectedDigest: nil, holding: nil,
            name: "segment \(index)", retryCommand: "'haul retry 1'")
    }

    /// Writes `range` of the file into `sink`.
    static func write(_ sink: any SegmentSink, _ range: Range<Int>) throws {
        try bytes[range].withUnsafeBytes { try sink.write($0) { true } }
    }

    /// Streams the file's two segments, the second first, the first interrupted after 1 MiB and
    /// resumed in a sink opened again, as checkpoints would record them; returns what a
    /// finalizer reads back of them.
    static func streamOutOfOrder(_ fixture: Fixture, dest: String, uploadID: String?) throws -> [StoredSegment] {
        let writer = SegmentWriter()
        var recorded: [Int: StoredSegment] = [:]
        func record(_ index: Int, _ sink: any SegmentSink, _ target: SegmentTarget, etag: String?) {
            let parts =
                (recorded[index]?.parts ?? [])
                + (sink.partPath.map { [StoredPart(path: $0, offset: target.offset + target.resumeAt, length: sink.bytesWritten)] } ?? [])
            recorded[index] = StoredSegment(index: index, length: target.length ?? 0, bytesDone: target.resumeAt + sink.bytesWritten, parts: parts, etag: etag)
        }
        let last = target(fixture, dest: dest, index: 1, uploadID: uploadID, lease: "11111111-last")
        let lastSink = try fixture.storage.openSegment(last, writer: writer)
        try write(lastSink, firstLength..<bytes.count)
        let receipt = try lastSink.finish {}
        try lastSink.flush()
        record(1, lastSink, last, etag: receipt.etag)
        lastSink.close()

        let first = target(fixture, dest: dest, index: 0, uploadID: uploadID, lease: "22222222-first")
        let interrupted = try fixture.storage.openSegment(first, writer: writer)
        try write(interrupted, 0..<(1 << 20))
        interrupted.drop()
        try interrupted.flush()
        record(0, interrupted, first, etag: nil)
        interrupted.close()
        // A resumed segment starts after what was kept; an atomic one sends its bytes again.
        let kept = recorded[0]?.bytesDone ?? 0
        #expect(kept == (fixture.storage.features.contains(.atomicSegments) ? 0 : 1 << 20))
        let resumed = target(fixture, dest: dest, index: 0, uploadID: uploadID, resumeAt: kept, lease: "33333333-again")
        let sink = try fixture.storage.openSegment(resumed, writer: writer)
        try write(sink, Int(kept)..<firstLength)
        let etag = try sink.finish {}.etag
        try sink.flush()
        record(0, sink, resumed, etag: etag)
        sink.close()
        return [try #require(recorded[0]), try #require(recorded[1])]
    }

    static func finished(_ dest: String, kind: Kind, segments: [StoredSegment], uploadID: String?) -> FinishedFile {
        FinishedFile(
            dest: dest, partFiles: kind == .parts, generation: 0, lease: "44444444-finalizer", url: url, announcedSize: Int64(bytes.count),
            segments: segments, uploadID: uploadID, contentType: nil, digestAlgorithm: .sha256, expectsDigest: true, markedPublishing: false,
            holding: nil, transferID: 1, retryCommand: "'haul retry 1'")
    }

    static var digest: String {
        let digester = Digester(.sha256)
        bytes.withUnsafeBytes { digester.update($0) }
        return digester.finish().description
    }

    @Test("segments out of order and a resumed one publish atomically, exact bytes; discard removes them", arguments: Kind.allCases)
    func publishes(_ kind: Kind) throws {
        let fixture = try Fixture(kind)
        let dest = "dir/file.bin"
        let uploadID = try fixture.prepare(dest)
        let segments = try Self.streamOutOfOrder(fixture, dest: dest, uploadID: uploadID)
        #expect(try fixture.storage.probe(dest) == nil)
        let fence = Fence(storage: fixture.storage, dest: dest)
        let digest = try fixture.storage.publish(Self.finished(dest, kind: kind, segments: segments, uploadID: uploadID), fence: fence)
        #expect(digest == Self.digest)
        #expect(fence.events == [uploadID == nil ? .publishing : .uploadCompleted])
        #expect(try fixture.storage.probe(dest)?.size == Int64(Self.bytes.count))
        let copy = try fixture.storage.readBack(dest) { false }
        defer { copy.remove() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy.path)) == Data(Self.bytes))
        #expect(try fixture.storage.occupant(of: dest, url: Self.url)?.mark == .thisURL)
        // A recorded version is trusted while the file is still it, at its size.
        #expect(try fixture.storage.unchangedFile(at: dest, size: Int64(Self.bytes.count), url: Self.url)?.mark == .thisURL)
        #expect(try fixture.storage.unchangedFile(at: dest, size: 1, url: Self.url) == nil)
        try fixture.storage.discard(dest)
        #expect(try fixture.storage.probe(dest) == nil)
    }

    @Test("publishing refuses to overwrite a file it did not write, which stays as it was", arguments: Kind.allCases)
    func refusesOthers(_ kind: Kind) throws {
        let fixture = try Fixture(kind)
        let dest = "theirs.bin"
        try fixture.place(dest, "another writer's file")
        let uploadID = try fixture.prepare(dest)
        let segments = try Self.streamOutOfOrder(fixture, dest: dest, uploadID: uploadID)
        let fence = Fence(storage: fixture.storage, dest: dest)
        #expect(throws: HaulError.self) {
            try fixture.storage.publish(Self.finished(dest, kind: kind, segments: segments, uploadID: uploadID), fence: fence)
        }
        #expect(fence.events.isEmpty)
        let copy = try fixture.storage.readBack(dest) { false }
        defer { copy.remove() }
        #expect(try String(contentsOfFile: copy.path, encoding: .utf8) == "another writer's file")
    }
}

extension StorageSegmentConformanceTests {
    @Test("a part file gone before publishing is reported by its segment, and nothing is published")
    func partsLost() throws {
        let fixture = try Fixture(.parts)
        let dest = "lost.bin"
        let segments = try Self.streamOutOfOrder(fixture, dest: dest, uploadID: nil)
        let root = try #require(fixture.storage as? FolderStorage).root
        try FileManager.default.removeItem(atPath: root.path + "/" + (try #require(segments[1].parts.first)).path)
        let lost = try #require(throws: PartsLost.self) {
            try fixture.storage.publish(
                Self.finished(dest, kind: .parts, segments: segments, uploadID: nil), fence: Fence(storage: fixture.storage, dest: dest))
        }
        #expect(lost.indexes == [1])
        #expect(try fixture.storage.probe(dest) == nil)
    }
}

/// `Storage.extract`, the same contract on each backend: a published archive's entries land
/// under the folder, recorded first where the storage writes them as they arrive; a folder that
/// holds something already is refused.
@Suite struct StorageExtractConformanceTests {
    /// The test's journal: what the storage recorded.
    final class Journal: ExtractionJournal, @unchecked Sendable {
        private let lock = NSLock()
        private var keys: [String] = []
        var count: Int { lock.withLock { keys.count } }
        func record(_ key: String) throws -> Bool { lock.withLock { keys.append(key) }; return true }
        func recordUpload(_ key: String, uploadID: String?) throws -> Bool { true }
        func recorded() throws -> [JournaledEntry] { [] }
        func forgetRecorded() throws -> Bool { true }
    }

    /// A tar of `hello.txt` ("hello, archive"), as text (its headers are ASCII, its padding NULs).
    static func tar() throws -> String {
        let folder = NSTemporaryDirectory() + "haul-tar-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "hello, archive".write(toFile: folder + "/hello.txt", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["tar", "-C", folder, "--format=ustar", "-cf", folder + "/pack.tar", "hello.txt"]
        try process.run()
        process.waitUntilExit()
        return try String(contentsOfFile: folder + "/pack.tar", encoding: .utf8)
    }

    @Test("an archive's entries land under the folder; a folder holding something is refused", arguments: StorageConformanceTests.Backend.allCases)
    func extracts(_ backend: StorageConformanceTests.Backend) throws {
        let fixture = try StorageConformanceTests.Fixture(backend)
        let archive = try Self.tar()
        try fixture.place("pack.tar", archive)
        let journal = Journal()
        let request = ExtractionRequest(archive: "pack.tar", folder: "out", size: Int64(archive.utf8.count), limits: ExtractionLimits(), transferID: 1)
        #expect(try fixture.storage.extract(request, journal: journal) { false } == 1)
        #expect(try fixture.storage.probe("out/hello.txt")?.size == 14)
        #expect(journal.count == (fixture.storage.features.contains(.objectLayout) ? 1 : 0))
        #expect(throws: HaulError.self) { try fixture.storage.extract(request, journal: Journal()) { false } }
        #expect(try fixture.storage.probe("out/hello.txt")?.size == 14)
    }
}
