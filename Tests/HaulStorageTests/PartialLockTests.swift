import Foundation
import HaulCore
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulStorage

@Suite("partial-file locks: one writer of a partial file at a time")
struct PartialLockTests {
    @Test("a partial file another writer holds is refused before anything is cut, sized or written; once published, a new one is made")
    func secondWriterRefused() throws {
        let folder = try TemporaryDirectory("partial-lock")
        let files = try TransferFiles(root: try StorageRoot(folder.path), relative: "x.iso")
        let partial = files.partial(generation: 0)
        let holding = HeldPartials()
        try files.preparePartial(size: 4096, generation: 0, url: "http://example.test/file", holding: holding)
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: partial))

        // Another writer: the planner's path (sizing) and a batch's (truncating) alike.
        #expect {
            try files.preparePartial(size: 1 << 20, generation: 0, url: "http://example.test/file")
        } throws: { error in
            (error as? HaulError)?.code == .destinationBusy && (error as? HaulError)?.kind == .partialLocked
                && (error as? HaulError)?.message == "another haul process is saving \(folder.sub("x.iso")) right now"
        }
        #expect(try OpenedRoot(files.root).openLocked(partial, O_WRONLY | O_CREAT, doing: "create") == nil)
        #expect(FileManager.default.contents(atPath: partial) == Data(repeating: 7, count: 4096))

        // The holder itself sizes the file again through its lock, and gives it up once published.
        try files.preparePartial(size: 8192, generation: 0, url: "http://example.test/file", holding: holding)
        #expect(rename(partial, files.destination) == 0)
        holding.release(partial)
        try files.preparePartial(size: 100, generation: 0, url: "http://example.test/file")
        #expect(FileManager.default.contents(atPath: files.destination)?.count == 8192)
        #expect(FileManager.default.contents(atPath: partial)?.count == 100)
    }

    @Test("lanes resuming one file's segments at once hold it through one lock: none is refused, another writer still is")
    func lanesShareOneHold() throws {
        let folder = try TemporaryDirectory("partial-lock-lanes")
        let refused = Atomic(0)
        // Rounds of a fresh process's lanes, since a race shows only now and then. Each round has
        // a file of its own: a child another test spawns meanwhile holds a copy of this process's
        // descriptors, and so an earlier round's lock, until it execs.
        for round in 0..<200 {
            let files = try TransferFiles(root: try StorageRoot(folder.path), relative: "x-\(round).iso")
            try files.preparePartial(size: 4096, generation: 0, url: "http://example.test/file")  // an interrupted run's file, held by no one now
            // The descriptor that made it is closed, but a child another test spawned meanwhile
            // holds a copy, and its lock, until it execs (a loaded CI machine once showed all 16
            // lanes refused): wait for that copy to go, so only this process's lanes compete.
            let deadline = Date().addingTimeInterval(30)
            while PartialLock.isHeld(files.partial(generation: 0)), Date() < deadline { usleep(1000) }
            let holding = HeldPartials()
            DispatchQueue.concurrentPerform(iterations: 16) { _ in
                do { try files.holdPartial(generation: 0, in: holding) } catch { refused.add(1, ordering: .relaxed) }
            }
            #expect(throws: HaulError.self) { try files.preparePartial(size: 4096, generation: 0, url: "http://example.test/file") }
            // Given up at once: the last reference to `holding` may be dropped later, on a thread of Dispatch's.
            holding.release(files.partial(generation: 0))
        }
        #expect(refused.load(ordering: .relaxed) == 0)
    }

    @Test("a lock taken on a file that was renamed away after it was opened is not a lock on the name")
    func movedFileIsNotHeld() throws {
        let folder = try TemporaryDirectory("partial-lock-moved")
        let root = open(folder.path, O_RDONLY | O_DIRECTORY)
        defer { close(root) }
        let fd = open(folder.sub("a.haul-partial"), O_WRONLY | O_CREAT, 0o644)
        defer { close(fd) }
        // Its writer published it between this open and this lock.
        #expect(rename(folder.sub("a.haul-partial"), folder.sub("a")) == 0)
        #expect(PartialLock.take(fd, root: root, relative: "a.haul-partial") == .moved)
        let again = open(folder.sub("b.haul-partial"), O_WRONLY | O_CREAT, 0o644)
        defer { close(again) }
        #expect(PartialLock.take(again, root: root, relative: "b.haul-partial") == .held)
        let other = open(folder.sub("b.haul-partial"), O_WRONLY)
        defer { close(other) }
        #expect(PartialLock.take(other, root: root, relative: "b.haul-partial") == .busy)
    }
}
