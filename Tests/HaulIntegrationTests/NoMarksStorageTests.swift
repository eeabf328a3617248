import Foundation
import HaulTestSupport
import Testing

/// Storage on a file system that keeps no user extended attributes (NFSv3, some FUSE mounts),
/// so no file carries the mark of its URL (`SourceMark` reads `unsupported`): the transfer
/// history alone tells Haul's files from others'. Tried on a real such file system, `ramfs`,
/// mounted for the test (so as root), which reports no size either (`statvfs` says 0 blocks):
/// that sets no limit, rather than refuse every file as larger than the volume.
@Suite("storage without marks or a size: the history decides", .serialized, .enabled(if: getuid() == 0))
struct NoMarksStorageTests {
    /// Mounts a `ramfs` on `folder` (which must exist) for the duration of `body`.
    private func onRamfs(_ folder: String, _ body: () throws -> Void) throws {
        let mounted = try Run.program("/bin/mount", ["-t", "ramfs", "ramfs", folder])
        try #require(mounted.status == 0, "cannot mount a ramfs: \(mounted.stderr)")
        defer { _ = try? Run.program("/bin/umount", ["-l", folder]) }
        let probe = folder + "/probe"
        _ = FileManager.default.createFile(atPath: probe, contents: Data())
        let script = """
            import errno, os, sys
            try:
                os.setxattr(sys.argv[1], 'user.haul.test', b'x')
            except OSError as e:
                sys.exit(0 if e.errno == errno.ENOTSUP else 1)
            sys.exit(1)
            """
        try #require(try Run.program("/usr/bin/python3", ["-c", script, probe]).status == 0, "ramfs keeps user attributes here")
        unlink(probe)
        try body()
    }

    @Test("a fleet --dest keeps a file no done transfer wrote and replaces one a done transfer of another URL wrote")
    func fleetDest() throws {
        let cluster = try Cluster("nomarks-fleet")
        let first = try Origin.file("nomarks/fleet/first.txt", size: 3000)
        let second = try Origin.file("nomarks/fleet/second.txt", size: 5000)
        try onRamfs(cluster.storage) {
            defer { cluster.stopWorkers() }
            let mine = Data("mine\n".utf8)
            try mine.write(to: URL(fileURLWithPath: cluster.storage + "/mine.txt"))
            try cluster.startWorker()
            let kept = try cluster.enqueue(Harness.origin + first.path, ["--dest", "mine.txt"])
            let published = try cluster.enqueue(Harness.origin + first.path, ["--dest", "pub.txt"])
            #expect(try cluster.waitFinal([kept, published]) == ["failed", "done"])
            #expect(try cluster.status(kept)["error_code"] as? String == "destination-exists")
            #expect(FileManager.default.contents(atPath: cluster.storage + "/mine.txt") == mine)
            let replaced = try cluster.enqueue(Harness.origin + second.path, ["--dest", "pub.txt"])
            #expect(try cluster.waitFinal([replaced]) == ["done"])
            #expect(cluster.sha256("pub.txt") == second.sha256)
        }
    }

    /// The history alone says whose file is at a name the origin gives: one another URL saved
    /// there since (same size, so only the history tells) is no earlier version of this URL's.
    @Test("a re-mirror of a URL the origin names is not kept as unchanged when another URL saved a file under that name since")
    func originNamedAfterAnotherURL() throws {
        let cluster = try Cluster("nomarks-named")
        let tag = UUID().uuidString.prefix(6)
        let first = try Origin.file("nomarks/a-\(tag)/same.bin", size: 7000)
        let other = try Origin.file("nomarks/b-\(tag)/same.bin", size: 7000)
        try onRamfs(cluster.storage) {
            defer { cluster.stopWorkers() }
            try cluster.startWorker()
            let one = try cluster.enqueue(Harness.origin + first.path)
            #expect(try cluster.waitFinal([one]) == ["done"])
            let replaced = try cluster.enqueue(Harness.origin + other.path, ["--force"])
            #expect(try cluster.waitFinal([replaced]) == ["done"])
            #expect(cluster.sha256("same.bin") == other.sha256)
            let again = try cluster.enqueue(Harness.origin + first.path)
            #expect(try cluster.waitFinal([again]) == ["done"])
            #expect(try cluster.status(again)["unchanged"] as? Bool == false, "another URL's file was taken for this URL's")
            #expect(cluster.sha256("same.bin") == first.sha256)
        }
    }

    @Test("haul get keeps a file it did not save, replaces one it saved from the same URL, and a rerun after another URL's get starts over")
    func get() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("nomarks-get")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("nomarks/get/file.bin", size: 300_000)
        let first = try Origin.file("nomarks/get/first.bin", size: 16 * 1_048_576)
        let second = try Origin.file("nomarks/get/second.bin", size: 16 * 1_048_576)
        try onRamfs(work) {
            let mine = Data("mine\n".utf8)
            try mine.write(to: URL(fileURLWithPath: work + "/mine.bin"))
            let refused = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/mine.bin"], database: database.url)
            #expect(refused.status == 2 && refused.stderr.contains("haul did not download it from this URL"), "\(refused.stderr)")
            #expect(FileManager.default.contents(atPath: work + "/mine.bin") == mine)
            for _ in 0..<2 {
                let saved = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/own.bin"], database: database.url)
                #expect(saved.status == 0, "\(saved.stderr)")
            }
            #expect(Origin.sha256(file: work + "/own.bin") == file.sha256)

            // Two gets of two URLs into one partial file, each interrupted: the first, run
            // again, learns from the history alone that the other wrote its partial file.
            let get = { (file: (path: String, sha256: String)) in
                ["get", Harness.origin + file.path, "-o", work + "/same.bin", "--segment-size", "2MiB", "--connections", "1", "--limit-rate", "4M"]
            }
            for file in [first, second] { try Run.haulInterruptedAfterASegment(get(file), of: file.path, database: database) }
            let again = try Run.haul(get(first), database: database.url)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stderr.contains("over: another transfer saved this file since it stopped"), "\(again.stderr)")
            #expect(Origin.sha256(file: work + "/same.bin") == first.sha256)
        }
    }

    @Test("haul extract into a file system that reports no size extracts, rather than refuse every byte as past its free space")
    func extract() throws {
        let work = Harness.temporaryDirectory("nomarks-extract")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let target = Harness.temporaryDirectory("nomarks-extract-target")
        defer { try? FileManager.default.removeItem(atPath: target) }
        try FileManager.default.createDirectory(atPath: work + "/tree", withIntermediateDirectories: true)
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: work + "/tree/a.txt"))
        #expect(try Run.program("/bin/tar", ["czf", work + "/t.tar.gz", "-C", work + "/tree", "a.txt"]).status == 0)
        try onRamfs(target) {
            let result = try Run.haul(["extract", work + "/t.tar.gz", target + "/out"], database: nil)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(FileManager.default.contents(atPath: target + "/out/a.txt") == Data("hello\n".utf8))
        }
    }
}
