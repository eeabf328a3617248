import Foundation
import HaulTestSupport
import Testing

/// Mirrors that fail or crawl rest and are tried again; only proof of other bytes demotes for good.
extension MirrorTests {
    /// The fault origin's bytes of `path` (fixed by the path), fetched at full speed into `file`;
    /// then the origin serves `path` at `rate` bytes per second a request.
    static func throttled(_ origin: FaultOrigin, _ path: String, size: Int, rate: Int, copyTo file: String) throws -> FaultOrigin.Served {
        let fast = try origin.create(path, size: size)
        let fetched = try Run.program("/usr/bin/curl", ["-sf", "-o", file, fast.url], environment: [:], timeout: 60)
        #expect(fetched.status == 0)
        let slow = try origin.create(path, size: size, ["rate": rate])
        #expect(slow.sha256 == fast.sha256)
        return slow
    }

    @Test("a mirror dead at first rests, is tried again, and serves segments once it is back; status shows when it is retried")
    func mirrorComesBack() throws {
        let origin = try FaultOrigin()
        let cluster = try Cluster("mirror-back")
        let copy = cluster.storage + "-back.bin"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        // The file, from an origin at 512 KiB/s a connection, and from a mirror that answers 404 until the file appears there.
        let served = try Self.throttled(origin, "/back.bin", size: 16 * 1_048_576, rate: 524_288, copyTo: copy)
        let later = "/mirrors/back-\(UUID().uuidString.prefix(6)).bin"
        let id = try cluster.enqueue(served.url, ["--mirror", Harness.origin + later, "--dest", "back.bin", "--segment-size", "256KiB"])
        try cluster.startWorker()
        var resting: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(60)
        while resting["state"] as? String != "resting" {
            guard Date() < deadline else { Issue.record("mirror 1 never rested"); return }
            resting = (try cluster.status(id)["mirrors"] as? [[String: Any]])?.last ?? [:]
        }
        #expect(resting["retry_after"] as? String != nil, "\(resting)")
        #expect((resting["reason"] as? String)?.contains("404") == true, "\(resting)")
        try FileManager.default.createDirectory(atPath: Harness.docroot + "/mirrors", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: copy, toPath: Harness.docroot + later)
        #expect(try cluster.waitFinal([id], timeout: 120) == ["done"])
        #expect(cluster.sha256("back.bin") == served.sha256)
        // Back in the rotation: healthy, its failures counted, its bytes brought.
        let row = try Self.mirrorRows(cluster.database).last ?? ""
        let fields = row.split(separator: " ")
        #expect(row.hasPrefix("healthy") && Int(fields[1]) ?? 0 >= 1 && Int(fields[2]) ?? 0 > 0, "\(row)")
    }

    @Test("a mirror far slower than the others loses its segments to them and rests")
    func crawlingMirror() throws {
        let origin = try FaultOrigin()
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("mirror-crawl")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let copy = "/mirrors/crawl-\(UUID().uuidString.prefix(6)).bin"
        try FileManager.default.createDirectory(atPath: Harness.docroot + "/mirrors", withIntermediateDirectories: true)
        // The same file from nginx and from a mirror at 32 KiB/s.
        let served = try Self.throttled(origin, "/crawl.bin", size: 16 * 1_048_576, rate: 32768, copyTo: Harness.docroot + copy)
        let result = try Run.haul(
            [
                "get", Harness.origin + copy, "--mirror", served.url, "-o", work + "/crawl.bin", "--segment-size", "2MiB", "-x", "1",
                "--lowest-speed-time", "2s",
            ], database: database.url, directory: work, timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: work + "/crawl.bin") == served.sha256)
        let rows = try Self.mirrorRows(database)
        #expect(rows.first.map { Int($0.split(separator: " ")[2]) ?? 0 > 0 } == true, "\(rows)")
        // Three crawls in a row rest it, with the reason; it is not demoted for good.
        let slow = rows.last ?? ""
        #expect(Int(slow.split(separator: " ")[1]) ?? 0 >= 3 && !slow.hasPrefix("demoted") && slow.contains("under a tenth"), "\(rows)")
    }
}
