import Foundation
import HaulS3
import HaulS3Storage
import HaulStorage
import HaulTestSupport
import Testing

/// The `Storage` protocol asked directly, the same questions of each backend: a folder and a
/// bucket on the test SeaweedFS. What is at a name, read back, discarded.
@Suite struct StorageConformanceTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case folder, bucket
        var testDescription: String { rawValue }
    }

    /// A backend under test, and how a file gets there the way another writer would put it.
    struct Fixture {
        let storage: any Storage
        let place: (String, String) throws -> Void

        init(_ backend: Backend) throws {
            switch backend {
            case .folder:
                let folder = NSTemporaryDirectory() + "haul-conformance-\(UUID().uuidString.prefix(8))"
                let root = try StorageRoot(folder)
                storage = FolderStorage(root: root)
                place = { dest, text in try Data(text.utf8).write(to: URL(fileURLWithPath: root.path + "/" + dest)) }
            case .bucket:
                let bucket = try S3Bucket("conformance")
                let location = try S3Location(parsing: "s3://\(bucket.name)/files/", what: "the test")
                let client = S3Client(config: try S3Config.fromEnvironment(S3Bucket.environment))
                storage = ObjectStore(location: location, client: client, scratch: try ScratchFolder(prefix: "haul-conformance"))
                place = { dest, text in try bucket.put("files/" + dest, text) }
            }
        }
    }

    @Test("a probe finds nothing, then the file's size and time", arguments: Backend.allCases)
    func probe(_ backend: Backend) throws {
        let fixture = try Fixture(backend)
        #expect(try fixture.storage.probe("a.bin") == nil)
        try fixture.place("a.bin", "twelve bytes")
        let found = try #require(try fixture.storage.probe("a.bin"))
        #expect(found.size == 12)
        #expect(found.lastModified.map { $0.hasSuffix(" GMT") } == true)
        #expect(fixture.storage.describe("a.bin").hasSuffix("a.bin"))
    }

    @Test("a file another writer put at a name is someone else's: unmarked", arguments: Backend.allCases)
    func occupant(_ backend: Backend) throws {
        let fixture = try Fixture(backend)
        #expect(try fixture.storage.occupant(of: "d.txt", url: "http://origin/d.txt") == nil)
        try fixture.place("d.txt", "not haul's")
        let found = try #require(try fixture.storage.occupant(of: "d.txt", url: "http://origin/d.txt"))
        #expect(found.mark == .unmarked)
        #expect(!found.isFolder)
        #expect(found.location == fixture.storage.describe("d.txt"))
    }

    @Test("read back gives the bytes as a local file; removing it keeps what is stored", arguments: Backend.allCases)
    func readBack(_ backend: Backend) throws {
        let fixture = try Fixture(backend)
        try fixture.place("b.txt", "stored bytes")
        let copy = try fixture.storage.readBack("b.txt") { false }
        #expect(try String(contentsOfFile: copy.path, encoding: .utf8) == "stored bytes")
        copy.remove()
        #expect(try fixture.storage.probe("b.txt")?.size == 12)
    }

    @Test("discard removes the file, and discarding nothing is no error", arguments: Backend.allCases)
    func discard(_ backend: Backend) throws {
        let fixture = try Fixture(backend)
        try fixture.place("c.txt", "gone soon")
        try fixture.storage.discard("c.txt")
        #expect(try fixture.storage.probe("c.txt") == nil)
        try fixture.storage.discard("c.txt")
    }

    @Test("an unsafe name is refused, never looked up", arguments: Backend.allCases)
    func unsafeName(_ backend: Backend) throws {
        let fixture = try Fixture(backend)
        #expect(throws: (any Error).self) { try fixture.storage.probe("../outside") }
    }

    @Test("features say how the backends differ")
    func features() throws {
        let folder = try Fixture(.folder).storage.features
        #expect(folder.contains(.localSpace) && folder.contains(.editableInPlace))
        #expect(!folder.contains(.atomicSegments) && !folder.contains(.objectLayout))
        let bucket = try Fixture(.bucket).storage.features
        #expect(bucket.contains(.atomicSegments) && bucket.contains(.objectLayout))
        #expect(!bucket.contains(.localSpace) && !bucket.contains(.editableInPlace))
        #expect(try Fixture(.folder).storage.firstSegment(requested: 1 << 20) == 1 << 20)
        #expect(try Fixture(.bucket).storage.firstSegment(requested: 1 << 20) == 5 << 20)
    }
}
