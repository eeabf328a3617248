import CLinux
import Foundation
import HaulCore
import Testing

@testable import HaulStorage

/// A folder's small-file batch: each whole file is written unnamed (`O_TMPFILE`) and linked into
/// place when the batch publishes it, or, on a file system without unnamed files, written to
/// its locked partial file and renamed. Either way a name that was taken meanwhile is judged
/// before anything replaces it, and nothing but the published files is left.
@Suite("a folder's small-file batch")
struct FolderBatchStoreTests {
    /// How the batch's files are written.
    enum Writing: String, CaseIterable, CustomTestStringConvertible {
        /// Unnamed until published (`O_TMPFILE`), the default where the file system makes them.
        case unnamed
        /// A partial file beside the destination, as on a file system without unnamed files.
        case partial
        var testDescription: String { rawValue }
    }

    /// The batch's leases as the test plays them: all held.
    final class Held: BatchFence {
        func renewIfDue() {}
        func isHeld(_ id: Int64) -> Bool { true }
        func heldNow(_ ids: [Int64]) throws -> Set<Int64> { Set(ids) }
    }

    /// A fresh storage folder and a batch store on it, writing as `writing` says.
    struct Fixture {
        let folder: String
        let storage: FolderStorage
        let store: FolderBatchStore

        init(_ writing: Writing) throws {
            folder = NSTemporaryDirectory() + "haul-batch-" + UUID().uuidString
            storage = FolderStorage(root: try StorageRoot(folder))
            store = FolderBatchStore(storage: storage, root: OpenedRoot(storage.root, unnamedFiles: writing == .unnamed))
        }

        /// A sink of `dest` that took all of `text`.
        func written(_ id: Int64, _ dest: String, _ text: String) throws -> any WholeFileSink {
            let file = WholeFile(
                transferID: id, dest: dest, url: "http://origin.test/\(dest)", size: Int64(text.utf8.count), contentType: nil, expectedDigest: nil,
                earlierUploadID: nil, generation: 0)
            let sink = try store.sink(for: file, fence: Held())
            try Array(text.utf8).withUnsafeBytes { try sink.write($0, completing: true) }
            try sink.complete()
            return sink
        }

        /// Stores `sinks`, refusing to replace a file that does not carry the sink's URL's mark.
        func store(_ sinks: [any WholeFileSink]) throws -> [(any Error)?] {
            try store.store(sinks, fence: Held()) { file in
                guard let found = try storage.occupant(of: file.dest, url: file.url), found.mark != .thisURL else { return }
                throw HaulError(.destinationExists, "\(found.location) is someone else's")
            }
        }

        /// Every name under the folder, sorted.
        var names: [String] { ((try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []).sorted() }

        func text(_ name: String) -> String? { try? String(contentsOfFile: folder + "/" + name, encoding: .utf8) }

        func remove() { try? FileManager.default.removeItem(atPath: folder) }
    }

    @Test("a batch's files are published whole, marked and sealed; unnamed ones have no name before", arguments: Writing.allCases)
    func publishes(_ writing: Writing) throws {
        let fixture = try Fixture(writing)
        defer { fixture.remove() }
        let sinks = try [fixture.written(1, "a/one.txt", "first"), fixture.written(2, "two.txt", "second")]
        // Before publishing, only a partial file has a name: `a/one.txt.haul-partial` and `two.txt.haul-partial`.
        let before = writing == .unnamed ? ["a"] : ["a", "a/one.txt.haul-partial", "two.txt.haul-partial"]
        #expect(fixture.names == before, "\(writing): \(fixture.names)")
        let outcomes = try fixture.store(sinks)
        #expect(outcomes.allSatisfy { $0 == nil }, "\(outcomes)")
        #expect(fixture.names == ["a", "a/one.txt", "two.txt"])
        #expect(fixture.text("a/one.txt") == "first" && fixture.text("two.txt") == "second")
        #expect(SourceMark.read(fixture.folder + "/two.txt", against: "http://origin.test/two.txt") == .thisURL)
        #expect(!SourceMark.changedSinceSealed(fixture.folder + "/two.txt"))
        #expect(try fixture.storage.occupant(of: "two.txt", url: "http://origin.test/two.txt")?.mark == .thisURL)
    }

    @Test("a file put at the name while the batch ran is kept, and the batch's file leaves no name", arguments: Writing.allCases)
    func keepsAFilePutMeanwhile(_ writing: Writing) throws {
        let fixture = try Fixture(writing)
        defer { fixture.remove() }
        let sink = try fixture.written(1, "taken.txt", "the batch's")
        try "put since".write(toFile: fixture.folder + "/taken.txt", atomically: false, encoding: .utf8)
        let outcomes = try fixture.store([sink])
        #expect((outcomes[0] as? HaulError)?.code == .destinationExists, "\(outcomes)")
        #expect(fixture.text("taken.txt") == "put since")
        #expect(fixture.names == ["taken.txt"])
    }

    @Test("the transfer's own older file at the name is replaced whole, with no other name left", arguments: Writing.allCases)
    func replacesItsOwnOlderFile(_ writing: Writing) throws {
        let fixture = try Fixture(writing)
        defer { fixture.remove() }
        #expect(try fixture.store([fixture.written(1, "same.txt", "old version")]).allSatisfy { $0 == nil })
        let outcomes = try fixture.store([fixture.written(2, "same.txt", "new")])
        #expect(outcomes.allSatisfy { $0 == nil }, "\(outcomes)")
        #expect(fixture.text("same.txt") == "new")
        #expect(fixture.names == ["same.txt"])
    }

    @Test("a discarded file leaves nothing, and publishing removes an earlier attempt's partial file", arguments: Writing.allCases)
    func leavesNothingBehind(_ writing: Writing) throws {
        let fixture = try Fixture(writing)
        defer { fixture.remove() }
        try fixture.written(1, "dropped.txt", "never published").discard()
        #expect(fixture.names.isEmpty, "\(fixture.names)")
        try "an earlier attempt's bytes".write(toFile: fixture.folder + "/kept.txt.haul-partial", atomically: false, encoding: .utf8)
        #expect(try fixture.store([fixture.written(2, "kept.txt", "whole")]).allSatisfy { $0 == nil })
        #expect(fixture.names == ["kept.txt"])
        #expect(fixture.text("kept.txt") == "whole")
    }

    @Test("an unnamed file is linked through /proc/self/fd where linkat(AT_EMPTY_PATH) is refused (Linux before 6.10, without privileges)")
    func linksThroughProc() throws {
        let folder = NSTemporaryDirectory() + "haul-link-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let directory = open(folder, O_RDONLY | O_DIRECTORY)
        defer { close(directory) }
        let fd = openat(directory, ".", HAUL_O_TMPFILE_BIT | O_DIRECTORY | O_WRONLY, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(write(fd, "linked", 6) == 6)
        #expect(haul_link_unnamed_through_proc(fd, directory, "named.txt") == 0)
        #expect(try String(contentsOfFile: folder + "/named.txt", encoding: .utf8) == "linked")
        #expect(haul_link_unnamed_through_proc(fd, directory, "named.txt") == -1 && errno == EEXIST, "a taken name was replaced")
    }
}
