import Foundation
import HaulTestSupport
import Testing

/// Storage errors fail the attempt with a reason an operator can act on, are retried
/// with backoff, and the transfer completes once the storage is usable again.
@Suite("reliability: storage errors")
struct StorageFaultTests {
    static let mib = Reliability.mebibyte

    /// The reason the transfer or any of its segments last failed with, or "".
    static func reasons(_ cluster: Cluster, _ id: Int64) throws -> String {
        ([try cluster.error(id)] + (try cluster.database.segments(id).map(\.lastError))).joined(separator: " | ")
    }

    @Test("storage without room for the file fails the attempt with 'not enough free space', retried once space is freed", arguments: ["inplace", "parts"])
    func diskFull(layout: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/full-\(layout).bin", size: 3 * Self.mib + 17)
        let cluster = try Cluster("full-\(layout)")
        let mount = try Mount(tmpfsAt: cluster.storage, size: "8m")
        defer { cluster.stopWorkers() }
        let filler = cluster.storage + "/filler"
        try Data(count: 7 * Self.mib + Self.mib / 2).write(to: URL(fileURLWithPath: filler))
        let id = try cluster.enqueue(served.url, ["--dest", "out.bin", "--segment-size", "1MiB", "--layout", layout])
        try cluster.startWorker()
        var seen = ""
        let full = try Harness.waitUntil(timeout: 30) {
            seen = try Self.reasons(cluster, id)
            return seen.contains("not enough free space")
        }
        #expect(full, "the reason says there is not enough free space: \(seen)")
        #expect(try cluster.state(id) != "failed", "storage without room is retried, not fatal at once")
        try FileManager.default.removeItem(atPath: filler)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"], "\((try? Self.reasons(cluster, id)) ?? "")")
        #expect(cluster.sha256("out.bin") == served.sha256)
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")
        cluster.stopWorkers()
        withExtendedLifetime(mount) {}
    }

    @Test("read-only storage fails the attempt with 'permission denied' and is retried once writable", arguments: ["inplace", "parts"])
    func readOnly(layout: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/ro-\(layout).bin", size: 2 * Self.mib + 5)
        let cluster = try Cluster("ro-\(layout)")
        let mount = try Mount(tmpfsAt: cluster.storage, size: "16m")
        defer { cluster.stopWorkers() }
        try mount.remount("ro")
        // A worker refuses to start on storage it cannot write; one already running carries on.
        let refused = try cluster.haul(["worker", "--storage", cluster.storage])
        #expect(refused.status == 2 && refused.stderr.contains("not writable"), "\(refused.stderr)")
        try mount.remount("rw")
        let worker = try cluster.startWorker()
        try #require(Harness.waitUntil(timeout: 30) { worker.stderr.contains("worker started") }, "\(worker.stderr)")
        try mount.remount("ro")
        let id = try cluster.enqueue(served.url, ["--dest", "out.bin", "--segment-size", "1MiB", "--layout", layout])
        var seen = ""
        let denied = try Harness.waitUntil(timeout: 20) {
            seen = try Self.reasons(cluster, id)
            return seen.contains("permission denied")
        }
        #expect(denied, "the reason says permission was denied: \(seen)")
        #expect(try cluster.state(id) != "failed")
        try mount.remount("rw")
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"], "\((try? Self.reasons(cluster, id)) ?? "")")
        #expect(cluster.sha256("out.bin") == served.sha256)
        cluster.stopWorkers()
        withExtendedLifetime(mount) {}
    }
}

extension StorageFaultTests {
    @Test("a directory where the file goes, or a file where a folder goes, fails the transfer at once with what to move, not after six tries")
    func somethingInTheWay() throws {
        let big = try Origin.file("storage-way/big.bin", size: 3 * Self.mib)
        let small = try Origin.file("storage-way/small.bin", size: 4096)
        let cluster = try Cluster("in-the-way")
        defer { cluster.stopWorkers() }
        for folder in ["taken", "taken-too"] {
            try FileManager.default.createDirectory(atPath: cluster.storage + "/" + folder, withIntermediateDirectories: true)
        }
        try Data("a file\n".utf8).write(to: URL(fileURLWithPath: cluster.storage + "/plain"))
        let ids = [
            try cluster.enqueue(Harness.origin + big.path, ["--dest", "taken", "--segment-size", "1MiB"]),
            try cluster.enqueue(Harness.origin + small.path, ["--dest", "taken-too"]),
            try cluster.enqueue(Harness.origin + big.path, ["--dest", "plain/big.bin", "--segment-size", "1MiB"]),
            try cluster.enqueue(Harness.origin + small.path, ["--dest", "plain/small.bin"]),
        ]
        try cluster.startWorker()
        #expect(try cluster.waitFinal(ids, timeout: 30) == ["failed", "failed", "failed", "failed"])
        for id in ids {
            let error = try cluster.error(id)
            #expect(error.contains("move it, or give the transfer another destination") && !error.contains("gave up after"), "transfer \(id): \(error)")
        }
        for folder in ["taken", "taken-too"] { #expect(try FileManager.default.contentsOfDirectory(atPath: cluster.storage + "/" + folder).isEmpty) }
        #expect(try String(contentsOfFile: cluster.storage + "/plain", encoding: .utf8) == "a file\n")
    }

    @Test("a part file lost from storage before finalizing: its segment is fetched again and the file arrives whole")
    func lostPart() throws {
        let cluster = try Cluster("lost-part")
        let file = try Origin.file("storage/lost-part.bin", size: 3 * Int(Self.mib) + 777)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "lost.bin", "--segment-size", "1MiB", "--layout", "parts"])
        // Fetch only: every segment done, nobody to finalize.
        let fetcher = try cluster.startWorker(["--roles", "planner,fetcher"])
        try #require(Harness.waitUntil(timeout: 30) { try cluster.state(id) == "finalizing" })
        fetcher.signal(SIGTERM)
        _ = fetcher.wait(timeout: 15)
        let parts = try FileManager.default.contentsOfDirectory(atPath: cluster.storage + "/lost.bin.haul-parts").sorted()
        let victim = try #require(parts.first { $0.hasPrefix("g0-s1-") }, "\(parts)")
        try FileManager.default.removeItem(atPath: cluster.storage + "/lost.bin.haul-parts/" + victim)

        let finisher = try cluster.startWorker()
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"], "\((try? cluster.error(id)) ?? "")")
        #expect(cluster.sha256("lost.bin") == file.sha256)
        #expect(finisher.stderr.contains("part files are missing from storage; their segments are fetched again"), "\(finisher.stderr)")
        let segments = try cluster.database.segments(id)
        #expect(segments.filter { $0.attempts > 1 }.map(\.index) == [1], "only segment 1 was fetched again: \(segments)")
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")
    }
}
