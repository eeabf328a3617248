import Foundation
import HaulCore
import HaulTestSupport
import Testing

@testable import HaulStorage

/// `café` in NFC and in NFD: one string to Swift, two names to the kernel. The storage layer
/// keys its files and folders by bytes, so the one is never taken for the other.
@Suite("storage: names told apart by their bytes, not by Swift's canonical equivalence")
struct ExactNameTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test("the spellings differ in bytes though Swift calls them equal (the premise of these tests)")
    func premise() {
        #expect(Self.composed == Self.decomposed)
        #expect(!Self.composed.sameBytes(as: Self.decomposed))
        #expect(Set([ExactText(Self.composed), ExactText(Self.decomposed), ExactText(Self.composed)]).count == 2)
    }

    @Test("a batch's folders: the second spelling's folder is made too, not skipped as already made")
    func foldersOfBothSpellings() throws {
        let folder = try TemporaryDirectory("exact-folders")
        let root = OpenedRoot(try StorageRoot(folder.path))
        for name in [Self.composed, Self.decomposed] {
            let path = try root.prepare(name + "/a.bin")
            #expect(FileManager.default.createFile(atPath: path, contents: Data(name.utf8)), "\(path)")
        }
        let made = try FileManager.default.contentsOfDirectory(atPath: folder.path).map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(made == [Array(Self.composed.utf8), Array(Self.decomposed.utf8)].sorted { $0.lexicographicallyPrecedes($1) })
    }

    @Test("a folder outside the root whose name is the root's in another spelling is outside")
    func rootInAnotherSpelling() throws {
        let parent = try TemporaryDirectory("exact-root")
        let rootPath = parent.sub("root-" + Self.decomposed)
        let sibling = parent.sub("root-" + Self.composed)
        for path in [rootPath, sibling] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        #expect(symlink(sibling, rootPath + "/link") == 0)
        #expect(throws: HaulError.self) { try StorageRoot(rootPath).prepare("link/x.bin") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: sibling).isEmpty)
    }

    @Test("each spelling's file is flushed and reported on its own")
    func flushBothSpellings() throws {
        let folder = try TemporaryDirectory("exact-flush")
        let missing = [folder.sub(Self.composed), folder.sub(Self.decomposed)]
        let failures = Flush.paths(missing)
        #expect(failures.count == 2, "\(failures)")
        #expect(Set(failures.keys) == Set(missing.map(ExactText.init)))
    }

    @Test("a held partial file is held per spelling: the second is opened, not handed the first's descriptor")
    func heldPerSpelling() throws {
        let held = HeldPartials()
        var opens = 0
        let first = try held.descriptor(of: "/x/" + Self.composed) {
            opens += 1
            return dup(STDIN_FILENO)
        }
        let second = try held.descriptor(of: "/x/" + Self.decomposed) {
            opens += 1
            return dup(STDIN_FILENO)
        }
        #expect(opens == 2 && first != second)
        #expect(try held.descriptor(of: "/x/" + Self.composed) { throw HaulError(.internal, "opened again") } == first)
        held.release("/x/" + Self.composed)
        held.release("/x/" + Self.decomposed)
    }
}
