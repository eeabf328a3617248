import Foundation
import HaulCore
import HaulStorage
import HaulTestSupport
import Testing

/// The `BatchStore` contract, the same on a folder and on a bucket of the test SeaweedFS: a
/// batch's whole files land at their names with their bytes and their source marks; one whose
/// lease the batch no longer holds is never visible; a file put at a name after the batch's
/// lookup is never replaced; nothing a discarded file wrote is left behind.
@Suite struct BatchStoreConformanceTests {
    typealias Backend = StorageConformanceTests.Backend

    /// The batch's leases as the test plays them: those of `held`, confirmed at once.
    final class Leases: BatchFence {
        let held: Set<Int64>
        init(held: Set<Int64>) { self.held = held }
        func renewIfDue() {}
        func isHeld(_ id: Int64) -> Bool { held.contains(id) }
        func heldNow(_ ids: [Int64]) throws -> Set<Int64> { held.intersection(ids) }
    }

    static func file(_ id: Int64, _ dest: String, _ text: String) -> WholeFile {
        WholeFile(
            transferID: id, dest: dest, url: "http://origin.test/\(dest)", size: Int64(text.utf8.count), contentType: nil, expectedDigest: nil,
            earlierUploadID: nil, generation: 0)
    }

    @Test("stored together: bytes and marks at their names; a lost lease or a name taken since the lookup stores nothing", arguments: Backend.allCases)
    func storesABatch(_ backend: Backend) throws {
        let fixture = try StorageConformanceTests.Fixture(backend)
        try fixture.place("before.txt", "not haul's")
        let store = fixture.storage.batchStore()
        let texts: [Int64: String] = [1: "first", 2: "second", 3: "third", 4: "fourth"]
        let files = [
            Self.file(1, "a/one.txt", "first"), Self.file(2, "two.txt", "second"), Self.file(3, "lost.txt", "third"), Self.file(4, "taken.txt", "fourth"),
        ]
        #expect(store.lookUp(files.map { (id: $0.transferID, dest: $0.dest) } + [(id: 5, dest: "before.txt")]) == [nil, nil, nil, nil, 10])
        // Put at a name after the lookup saw nothing there: the batch must not replace it.
        try fixture.place("taken.txt", "put since")
        let leases = Leases(held: [1, 2, 4])
        var completed: [any WholeFileSink] = []
        for file in files {
            let sink = try store.sink(for: file, fence: leases)
            let bytes = Array(texts[file.transferID]!.utf8)
            try bytes.withUnsafeBytes { try sink.write($0, completing: true) }
            do {
                try sink.complete()
                completed.append(sink)
            } catch let error as HaulError {
                // A store that fences each file as it completes (a bucket) says so at once.
                #expect(error.code == .leaseLost && file.transferID == 3, "\(error)")
                sink.discard()
            }
        }
        let outcomes = try store.store(completed, fence: leases) { file in
            guard let found = try fixture.storage.occupant(of: file.dest, url: file.url), found.mark != .thisURL else { return }
            throw HaulError(.destinationExists, "\(found.location) is someone else's")
        }
        let byID = Dictionary(uniqueKeysWithValues: zip(completed.map(\.file.transferID), outcomes))
        #expect(byID[1].map { $0 == nil } == true && byID[2].map { $0 == nil } == true, "\(byID)")
        #expect(byID[4].map { $0 != nil } == true, "the file put since the lookup was replaced: \(byID)")
        if let lost = byID[3] { #expect((lost as? HaulError)?.code == .leaseLost, "\(String(describing: lost))") }
        for file in files.prefix(2) {
            let copy = try fixture.storage.readBack(file.dest) { false }
            #expect(try String(contentsOfFile: copy.path, encoding: .utf8) == texts[file.transferID])
            copy.remove()
            #expect(try fixture.storage.occupant(of: file.dest, url: file.url)?.mark == .thisURL)
        }
        #expect(try fixture.storage.probe("lost.txt") == nil)
        let taken = try fixture.storage.readBack("taken.txt") { false }
        #expect(try String(contentsOfFile: taken.path, encoding: .utf8) == "put since")
        taken.remove()
        if fixture.storage.identity.hasPrefix("file://") {
            let folder = String(fixture.storage.identity.dropFirst("file://".count))
            let left = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { $0.contains(".haul-") }
            #expect(left.isEmpty, "partial files left: \(left)")
        }
    }
}
