import Foundation
import HaulTestSupport
import Testing

/// The core pipeline end to end: real PostgreSQL, real nginx, real `haul` processes.
@Suite("pipeline")
struct PipelineTests {
    @Test("a multi-segment file arrives byte for byte, in both layouts", arguments: ["inplace", "parts"])
    func multiSegment(layout: String) throws {
        let cluster = try Cluster("multi-\(layout)")
        let file = try Origin.file("pipeline/multi-\(layout).bin", size: 5 * 1_048_576 + 12345)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "out/multi.bin", "--segment-size", "512KiB", "--layout", layout])
        try cluster.startWorker(["--concurrency", "3"])
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(cluster.sha256("out/multi.bin") == file.sha256)
        let status = try cluster.status(id)
        #expect(status["size"] as? Int == 5 * 1_048_576 + 12345)
        #expect(status["bytes_done"] as? Int == 5 * 1_048_576 + 12345)
        #expect((status["segments"] as? [String: Any])?["total"] as? Int == 11)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cluster.storage + "/out")
        #expect(leftovers == ["multi.bin"], "no partial file or parts folder is left behind")
    }

    @Test("zero-byte, one-byte and odd-sized files", arguments: [0, 1, 4097, 1_048_577])
    func smallSizes(size: Int) throws {
        let cluster = try Cluster("size-\(size)")
        let file = try Origin.file("pipeline/size-\(size).bin", size: size)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "s.bin", "--segment-size", "512KiB"])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(cluster.sha256("s.bin") == file.sha256)
        #expect(try cluster.status(id)["size"] as? Int == size)
    }

    @Test("the planner's probe is the first segment's own GET: no HEAD, one request for a small file")
    func probeIsFirstSegment() throws {
        let cluster = try Cluster("probe")
        let file = try Origin.file("pipeline/probe-\(UUID().uuidString.prefix(6)).bin", size: 300_000)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "p.bin"])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id]) == ["done"])
        let requests = Origin.requests(for: file.path)
        #expect(requests.count == 1, "\(requests)")
        #expect(requests.allSatisfy { $0.contains("\"GET ") })
    }

    @Test("an origin without range support is fetched as one stream")
    func noRanges() throws {
        let cluster = try Cluster("norange")
        let file = try Origin.file("pipeline/norange.bin", size: 3 * 1_048_576 + 7)
        let id = try cluster.enqueue(Harness.origin + "/norange" + file.path, ["--dest", "n.bin", "--segment-size", "512KiB"])
        try cluster.startWorker(["--concurrency", "4"])
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(cluster.sha256("n.bin") == file.sha256)
        #expect((try cluster.status(id)["segments"] as? [String: Any])?["total"] as? Int == 1)
    }

    @Test("redirects are followed to http(s), and refused to other schemes and in loops")
    func redirects() throws {
        let cluster = try Cluster("redirect")
        let file = try Origin.file("pipeline/redirected.bin", size: 2 * 1_048_576)
        let good = try cluster.enqueue(Harness.origin + "/redirect" + file.path, ["--dest", "r.bin", "--segment-size", "512KiB"])
        let ftp = try cluster.enqueue(Harness.origin + "/to-ftp", ["--dest", "f.bin"])
        let loop = try cluster.enqueue(Harness.origin + "/loop", ["--dest", "l.bin"])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([good, ftp, loop]) == ["done", "failed", "failed"])
        #expect(cluster.sha256("r.bin") == file.sha256)
        #expect((try cluster.status(ftp)["error"] as? String)?.contains("not http or https") == true)
        #expect((try cluster.status(loop)["error"] as? String)?.contains("too many redirects") == true)
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/f.bin"))
    }

    @Test("HTTPS verifies against the test CA, and fails clearly without it")
    func https() throws {
        let cluster = try Cluster("tls")
        let file = try Origin.file("pipeline/tls-\(UUID().uuidString.prefix(8)).bin", size: 1_500_000)
        let trusted = try cluster.enqueue(Harness.originTLS + file.path, ["--dest", "t.bin", "--segment-size", "512KiB", "--ca-cert", Harness.testCA])
        let untrusted = try cluster.enqueue(Harness.originTLS + file.path, ["--dest", "u.bin"])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([trusted, untrusted]) == ["done", "failed"])
        #expect(cluster.sha256("t.bin") == file.sha256)
        let error = try cluster.status(untrusted)["error"] as? String ?? ""
        #expect(error.contains("certificate") && error.contains("--ca-cert"), "\(error)")
        // The origin offers HTTP/2 (as most HTTPS origins do): libcurl speaks it, ranges and all.
        let requests = Origin.requests(for: file.path)
        #expect(!requests.isEmpty && requests.allSatisfy { $0.contains(" HTTP/2.0\"") }, "\(requests)")
    }

    @Test("a batch of small files over HTTPS from an origin that offers HTTP/2: spoken, and each file whole")
    func smallFilesOverHTTP2() throws {
        let cluster = try Cluster("tls-batch")
        let folder = "pipeline/h2-" + UUID().uuidString.prefix(8)
        let files = try (0..<40).map { try Origin.file("\(folder)/f\($0).bin", size: 1000 + $0 * 97) }
        let manifest = Harness.temporaryDirectory("h2-manifest") + "/list.txt"
        try files.enumerated().map { "\(Harness.originTLS)\($1.path) h2/f\($0).bin" }.joined(separator: "\n")
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        #expect(try cluster.haul(["enqueue", "--manifest", manifest, "--batch", "h2"]).status == 0)
        try cluster.startWorker(["--concurrency", "4"], environment: ["HAUL_CA_BUNDLE": Harness.testCA])
        let wait = try cluster.haul(["wait", "--batch", "h2", "--timeout", "60s"])
        #expect(wait.status == 0, "\(wait.stdout) \(wait.stderr)")
        for (index, file) in files.enumerated() { #expect(cluster.sha256("h2/f\(index).bin") == file.sha256, "f\(index)") }
        let requests = files.flatMap { Origin.requests(for: $0.path) }
        #expect(requests.count >= files.count && requests.allSatisfy { $0.contains(" HTTP/2.0\"") }, "\(requests.prefix(3))")
    }

    @Test("three worker processes share four transfers")
    func threeWorkers() throws {
        let cluster = try Cluster("three")
        // All three wait for work before there is any: a worker that starts late on a loaded
        // machine would otherwise find the transfers done, and the test would count two.
        for _ in 0..<3 { try cluster.startWorker(["--concurrency", "2"]) }
        try #require(
            try Harness.waitUntil(timeout: 30) { try cluster.database.scalar("SELECT count(*) FROM workers WHERE stopped_at IS NULL") == "3" },
            "three workers did not register")
        var expected: [Int64: (String, String)] = [:]
        for index in 0..<4 {
            let file = try Origin.file("pipeline/shared-\(index).bin", size: 3 * 1_048_576 + index * 1000)
            let id = try cluster.enqueue(Harness.origin + "/slow" + file.path, ["--dest", "shared/\(index).bin", "--segment-size", "256KiB"])
            expected[id] = ("shared/\(index).bin", file.sha256)
        }
        #expect(try cluster.waitFinal(Array(expected.keys), timeout: 90).allSatisfy { $0 == "done" })
        for (_, (dest, sha)) in expected { #expect(cluster.sha256(dest) == sha) }
        let workersUsed = try cluster.database.scalar("SELECT count(DISTINCT worker_id) FROM segments")
        #expect(Int(workersUsed) == 3)
    }

    @Test("a checksum is verified: a match is recorded, a mismatch fails with both digests")
    func checksums() throws {
        let cluster = try Cluster("checksum")
        let file = try Origin.file("pipeline/sum.bin", size: 1_200_000)
        let good = try cluster.enqueue(Harness.origin + file.path, ["--dest", "good.bin", "--checksum", "sha256:\(file.sha256)"])
        let wrong = String(repeating: "0", count: 64)
        let bad = try cluster.enqueue(Harness.origin + file.path, ["--dest", "bad.bin", "--checksum", "sha256:\(wrong)"])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([good, bad]) == ["done", "failed"])
        #expect(try cluster.status(good)["digest"] as? String == "sha256:\(file.sha256)")
        let error = try cluster.status(bad)["error"] as? String ?? ""
        #expect(error.contains(wrong) && error.contains(file.sha256), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/bad.bin"), "a file that fails its checksum is never published")
    }

    @Test("idle workers split a slow segment (straggler splitting) and the file is still exact", arguments: ["inplace", "parts"])
    func stragglerSplitting(layout: String) throws {
        let cluster = try Cluster("split-\(layout)")
        // A split leaves the running worker what it may receive before it learns of the cut
        // (about two seconds' worth at 4 MB/s): the segment must be well longer than that.
        let file = try Origin.file("pipeline/straggler-\(layout).bin", size: 48 * 1_048_576 + 99)
        let id = try cluster.enqueue(Harness.origin + "/slow" + file.path, ["--dest", "s.bin", "--segment-size", "40MiB", "--layout", layout])
        try cluster.startWorker(["--concurrency", "4"])
        #expect(try cluster.waitFinal([id], timeout: 90) == ["done"])
        #expect(cluster.sha256("s.bin") == file.sha256)
        let segments = Int(try cluster.database.scalar("SELECT count(*) FROM segments WHERE transfer_id = \(id)")) ?? 0
        #expect(segments > 2, "a 40 MiB + 8 MiB file at 4 MB/s per connection leaves three fetchers idle; they split (\(segments) segments)")
        let covered = try cluster.database.scalar("SELECT sum(length) FROM segments WHERE transfer_id = \(id)")
        #expect(covered == String(48 * 1_048_576 + 99), "the segments still cover the file exactly once")
    }
}
