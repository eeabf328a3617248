import Foundation
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Testing

/// The small-file fast path (`BatchProbe`): many pending files of one origin probed together over
/// reused connections, finished in their probe and recorded a batch per transaction.
@Suite("small files in probe batches")
struct SmallFileTests {
    private func manifest(_ lines: [String]) throws -> String {
        let path = Harness.temporaryDirectory("small-manifest") + "/list.jsonl"
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Files of awkward small sizes under `folder` on the test nginx, with their sha256.
    private func files(_ folder: String, count: Int) throws -> [(path: String, sha256: String)] {
        try (0..<count).map { index in try Origin.file("\(folder)/f\(index).bin", size: Self.size(index)) }
    }

    private static func size(_ index: Int) -> Int { [0, 1, 4096, 4097, 65_536, 100_003][index % 6] + index }

    @Test("a batch of small files: each arrives whole, finished together per batch, over reused connections")
    func batchOfSmallFiles() throws {
        let cluster = try Cluster("small")
        let folder = "small/" + UUID().uuidString.prefix(8)
        let small = try files(folder, count: 40)
        // A file of several segments, one with --extract, one with a checksum that is wrong, one missing.
        let big = try Origin.file("\(folder)/big.bin", size: 9 * 1_048_576 + 17)
        let tarball = Harness.temporaryDirectory("small-tar")
        try "inside\n".write(toFile: tarball + "/note.txt", atomically: true, encoding: .utf8)
        #expect(try Run.program("/usr/bin/tar", ["-czf", Harness.docroot + "/\(folder)/pack.tar.gz", "-C", tarball, "note.txt"], environment: [:]).status == 0)
        var lines = small.map { #"{"url": "\#(Harness.origin)\#($0.path)", "dest": "\#($0.path.dropFirst())"}"# }
        lines.append(#"{"url": "\#(Harness.origin)\#(big.path)", "dest": "big.bin", "checksum": "sha256:\#(big.sha256)"}"#)
        lines.append(#"{"url": "\#(Harness.origin)/\#(folder)/pack.tar.gz", "dest": "pack.tar.gz", "extract": true}"#)
        lines.append(#"{"url": "\#(Harness.origin)\#(small[2].path)", "dest": "wrong.bin", "checksum": "sha256:\#(String(repeating: "0", count: 64))"}"#)
        lines.append(#"{"url": "\#(Harness.origin)\#(small[3].path)", "dest": "right.bin", "checksum": "sha256:\#(small[3].sha256)"}"#)
        lines.append(#"{"url": "\#(Harness.origin)/\#(folder)/missing.bin", "dest": "missing.bin"}"#)
        #expect(try cluster.haul(["enqueue", "--manifest", try manifest(lines), "--batch", "small"]).status == 0)
        #expect(try cluster.haul(["host-limit", "set", String(Harness.origin.dropFirst("http://".count)), "16"]).status == 0)
        let worker = try cluster.startWorker(["--concurrency", "2", "--probe-batch", "16"])
        let wait = try cluster.haul(["wait", "--batch", "small", "--timeout", "90s"])
        #expect(wait.status == 1, "two transfers fail (wrong checksum, 404): \(wait.stdout) \(wait.stderr)")

        for file in small { #expect(cluster.sha256(String(file.path.dropFirst())) == file.sha256, "\(file.path)") }
        #expect(cluster.sha256("big.bin") == big.sha256, "a file of several segments is handed to the fetchers")
        #expect((try? String(contentsOfFile: cluster.storage + "/pack/note.txt", encoding: .utf8)) == "inside\n", "--extract still runs")
        #expect(cluster.sha256("right.bin") == small[3].sha256)
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/wrong.bin"), "a file with the wrong digest is never published")
        let failures = try cluster.database.scalar("SELECT string_agg(dest || '=' || error_code, ',' ORDER BY dest) FROM transfers WHERE state = 'failed'")
        #expect(failures.hasPrefix("missing.bin=origin-status") && failures.hasSuffix("wrong.bin=checksum-mismatch"), "\(failures)")
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")

        // Finished in batches: a transaction's now() is one finished_at for all it finished.
        let smallDone = "t.state = 'done' AND t.size < 1000000 AND t.dest NOT IN ('right.bin', 'pack.tar.gz')"
        let batches = Int(try cluster.database.scalar("SELECT count(DISTINCT finished_at) FROM transfers t WHERE \(smallDone)")) ?? 0
        #expect(batches > 0 && batches <= small.count / 4, "\(small.count) small files finished in \(batches) transactions")
        let segments = try cluster.database.scalar("SELECT count(*) FROM segments s JOIN transfers t ON t.id = s.transfer_id WHERE \(smallDone)")
        #expect(segments == "0", "a file that fit in its probe has no segment row")
        let history = try cluster.database.scalar(
            "SELECT string_agg(DISTINCT e.from_state || '>' || e.to_state, ',') FROM transfer_events e JOIN transfers t ON t.id = e.transfer_id WHERE \(smallDone)"
        )
        // Only a slot holder's moves through `planning` are events: a file recorded from `pending`
        // writes none, its row being its final change, which its history shows.
        #expect(history == "" || history == "pending>planning,planning>done", "\(history)")
        let eventless = try cluster.database.scalar(
            "SELECT min(t.id) FROM transfers t WHERE \(smallDone) AND NOT EXISTS (SELECT 1 FROM transfer_events e WHERE e.transfer_id = t.id)")
        let view = FleetView(try PostgresConnection(conninfo: cluster.database.url))
        #expect(try view.history(of: try #require(Int64(eventless))).map { "\($0.from)>\($0.to)" } == ["pending>done"])
        // Reused connections: far fewer than one per file.
        var connections: Set<Substring> = []
        for file in small {
            for line in Origin.requests(for: file.path) { connections.insert(line.split(separator: " ").last ?? "") }
        }
        #expect(connections.count <= small.count / 2, "\(small.count) files over \(connections.count) connections: \(connections.sorted())")

        // The log: a line per file, as for a lone file, and a summary per batch whose counts add up.
        let summaries = worker.stderr.split(separator: "\n").filter { $0.contains("small files recorded") }
        let recorded = summaries.compactMap { line in line.split(separator: " ").first { $0.hasPrefix("done=") }.flatMap { Int($0.dropFirst(5)) } }.reduce(0, +)
        let batchDone = try cluster.database.scalar("SELECT count(*) FROM transfers WHERE state = 'done' AND dest NOT IN ('big.bin', 'pack.tar.gz')")
        #expect(String(recorded) == batchDone && summaries.count <= small.count / 4, "\(summaries.count) summaries: \(summaries)")
        #expect(worker.stderr.split(separator: "\n").filter { $0.contains("transfer done") }.count == Int(batchDone).map { $0 + 2 }, "\(worker.stderr)")
    }

    @Test(
        "a user without privileges gets a batch of small files: each is written unnamed and linked into place, and a file of theirs at a name is kept",
        .enabled(if: getuid() == 0 && getpwnam("nobody") != nil))
    func unprivilegedBatch() throws {
        let database = try TestDatabase()
        let small = try files("small/" + UUID().uuidString.prefix(8), count: 6)
        let work = Harness.temporaryDirectory("small-nobody")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let output = work + "/out"
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
        let nobody = getpwnam("nobody")!.pointee
        chown(output, nobody.pw_uid, nobody.pw_gid)
        // Their own file at one name: `get` keeps it (no --force), and says so.
        let kept = output + "/f5.bin"
        try Data("theirs\n".utf8).write(to: URL(fileURLWithPath: kept))
        chown(kept, nobody.pw_uid, nobody.pw_gid)
        let haul = try Harness.haulBinaryForOtherUsers()
        // Without root's capabilities: each file is created and linked as this user's own.
        let result = try Run.program(
            "/usr/sbin/runuser", ["-u", "nobody", "--", haul, "get", "-q"] + small.map { Harness.origin + $0.path } + ["-o", output + "/"],
            environment: ["DATABASE_URL": database.url], directory: "/", timeout: 60)
        #expect(result.status != 0 && result.stderr.contains("f5.bin' already exists"), "\(result.stderr)")
        for file in small.prefix(5) {
            let path = output + "/" + (file.path as NSString).lastPathComponent
            #expect(Origin.sha256(file: path) == file.sha256, "\(path)")
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_uid == nobody.pw_uid, "\(path) is not the user's own")
        }
        #expect(try String(contentsOfFile: kept, encoding: .utf8) == "theirs\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output).sorted() == (0..<6).map { "f\($0).bin" })
    }

    @Test("mirroring the same files again: every one is a conditional probe answered 304, and nothing is rewritten")
    func remirrorInBatches() throws {
        let cluster = try Cluster("small-again")
        let folder = "small/" + UUID().uuidString.prefix(8)
        let small = try files(folder, count: 24)
        let lines = small.map { "\(Harness.origin)\($0.path) \($0.path.dropFirst())" }
        let path = try manifest(lines)
        #expect(try cluster.haul(["enqueue", "--manifest", path, "--batch", "first"]).status == 0)
        try cluster.startWorker(["--concurrency", "2"])
        #expect(try cluster.haul(["wait", "--batch", "first", "--timeout", "60s"]).status == 0)
        let inodes = try small.map { try FileManager.default.attributesOfItem(atPath: cluster.storage + $0.path)[.systemFileNumber] as? Int }

        let changed = try Origin.file(String(small[5].path.dropFirst()), size: 777)
        usleep(1_100_000)  // Last-Modified has one-second resolution.
        _ = try Origin.file(String(small[5].path.dropFirst()), size: 777)
        #expect(try cluster.haul(["enqueue", "--manifest", path, "--batch", "second"]).status == 0)
        let waited = try cluster.haul(["wait", "--batch", "second", "--timeout", "60s"])
        #expect(waited.status == 0)
        // The figures count what was fetched: the files kept whole are counted apart, not as 0 bytes of their size.
        #expect(waited.stderr.contains("batch second: 24/24 done (23 unchanged), 0 failed or canceled, 777 B / 777 B"), "\(waited.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(try cluster.haul(["status", "--batch", "second", "--json"]).stdout.utf8)) as? [String: Any]
        #expect(summary?["unchanged"] as? Int == 23 && summary?["bytes_known"] as? Int == 777 && summary?["bytes_done"] as? Int == 777, "\(summary ?? [:])")
        let unchanged = try cluster.database.scalar(
            "SELECT count(*) FROM transfers t JOIN batches b ON b.id = t.batch_id WHERE b.name = 'second' AND t.unchanged")
        #expect(unchanged == String(small.count - 1), "all but the changed file were 304s")
        for (index, file) in small.enumerated() where index != 5 {
            #expect(try FileManager.default.attributesOfItem(atPath: cluster.storage + file.path)[.systemFileNumber] as? Int == inodes[index])
            #expect(cluster.sha256(String(file.path.dropFirst())) == file.sha256)
        }
        #expect(cluster.sha256(String(small[5].path.dropFirst())) == changed.sha256, "the changed file is replaced")
    }
}

extension SmallFileTests {
    @Test("batch probes hold no more connections against a host than its limit, across workers")
    func batchesKeepTheHostLimit() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // Small files sent slowly (about 0.4 s each), so that requests overlap and can be counted.
        let served = try (0..<24).map { try origin.create("/slow-small/\($0).bin", size: 40_000, ["rate": 100_000]) }
        let cluster = try Cluster("small-limit")
        #expect(try cluster.haul(["host-limit", "set", "127.0.0.1:\(origin.port)", "3"]).status == 0)
        let lines = served.map { "\($0.url) \($0.path.dropFirst())" }
        #expect(try cluster.haul(["enqueue", "--manifest", try manifest(lines), "--batch", "slow"]).status == 0)
        for _ in 0..<2 { try cluster.startWorker(["--concurrency", "4", "--probe-batch", "16"]) }
        #expect(try cluster.haul(["wait", "--batch", "slow", "--timeout", "90s"]).status == 0)
        for file in served { #expect(cluster.sha256(String(file.path.dropFirst())) == file.sha256) }
        // The origin's own log: the most requests it was answering at one moment. The origin's
        // handler thread stamps a request finished only after its last write returned, and under
        // load the client has by then sometimes released the slot and another worker opened its
        // next request: ends are taken 50 ms early, well inside the 0.4 s each request takes, so
        // that this logging race is not counted while a real extra connection still is.
        var events: [(time: Double, change: Int)] = []
        for file in served {
            for request in try origin.stats(file.path).requests {
                let end = request.finished ?? request.time
                events.append((request.time, 1))
                events.append((max(request.time, end - 0.050), -1))
            }
        }
        // Ends before starts at the same instant.
        events.sort { $0.time == $1.time ? $0.change < $1.change : $0.time < $1.time }
        var open = 0
        var most = 0
        for event in events {
            open += event.change
            most = max(most, open)
        }
        #expect(most <= 3, "at most 3 requests at once against the host, saw \(most)")
        #expect(most >= 2, "the limit still lets several run at once (saw \(most))")
    }
}

extension SmallFileTests {
    @Test("a worker killed mid-batch: its batch's leases run out and another worker fetches those files whole")
    func killedMidBatch() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try (0..<12).map { try origin.create("/kill-batch/\($0).bin", size: 60_000, ["rate": 100_000]) }
        let cluster = try Cluster("small-kill")
        let lines = served.map { "\($0.url) \($0.path.dropFirst())" }
        #expect(try cluster.haul(["enqueue", "--manifest", try manifest(lines), "--batch", "k"]).status == 0)
        let first = try cluster.startWorker(["--concurrency", "2", "--lease", "1s"])
        let claimed = "SELECT count(*) FROM transfers WHERE state IN ('pending','planning') AND lease_expires_at > now()"
        try #require(Harness.waitUntil(timeout: 20) { (Int(try cluster.database.scalar(claimed)) ?? 0) >= 4 })
        usleep(300_000)  // Some bytes of the batch are on storage, none published.
        first.signal(SIGKILL)
        _ = first.wait(timeout: 10)
        try cluster.startWorker(["--concurrency", "2", "--lease", "1s"])
        #expect(try cluster.haul(["wait", "--batch", "k", "--timeout", "60s"]).status == 0)
        for file in served { #expect(cluster.sha256(String(file.path.dropFirst())) == file.sha256, "\(file.path)") }
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")
    }
}
