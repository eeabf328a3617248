import Foundation
import HaulTestSupport
import Testing

/// Batch mirrors and fleet operation against real PostgreSQL, nginx and workers.
@Suite("fleet")
struct FleetTests {
    private func manifestFile(_ text: String) throws -> String {
        let path = Harness.temporaryDirectory("manifest") + "/list.txt"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("a manifest with an invalid line inserts nothing and names the line; --skip-invalid inserts the rest")
    func allOrNothing() throws {
        let cluster = try Cluster("manifest")
        let text = """
            # nightly
            \(Harness.origin)/fleet/a.bin   a.bin
            {"url": "\(Harness.origin)/fleet/b.bin", "dest": "dir/b.bin", "priority": 3}

            ftp://nope/c.bin
            \(Harness.origin)/fleet/d.bin
            """
        let path = try manifestFile(text)
        let refused = try cluster.haul(["enqueue", "--manifest", path, "--batch", "n1"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("line 5") && refused.stderr.contains("ftp"), "\(refused.stderr)")
        #expect(try cluster.database.scalar("SELECT count(*) FROM transfers") == "0")

        let partial = try cluster.haul(["enqueue", "--manifest", path, "--batch", "n1", "--skip-invalid", "--json"])
        #expect(partial.status == 0, "\(partial.stderr)")
        #expect(partial.stdout.contains("\"inserted\":3") && partial.stdout.contains("\"rejected\":1"), "\(partial.stdout)")
        #expect(
            try cluster.database.scalar("SELECT string_agg(dest || ':' || priority, ',' ORDER BY dest) FROM transfers") == "a.bin:0,dir/b.bin:3,fleet/d.bin:0")

        let again = try cluster.haul(["enqueue", "--manifest", path, "--batch", "n1", "--skip-invalid", "--json"])
        #expect(again.stdout.contains("\"inserted\":0") && again.stdout.contains("\"existing\":3"), "enqueuing again adds nothing: \(again.stdout)")
    }

    @Test("a mirror batch downloads, and haul wait and status --batch report it")
    func batchAndWait() throws {
        let cluster = try Cluster("batch")
        var lines: [String] = []
        var sums: [String: String] = [:]
        for index in 0..<12 {
            let file = try Origin.file("fleet/batch/\(index).bin", size: 20_000 + index * 3_000)
            lines.append("\(Harness.origin)\(file.path)")
            sums["fleet/batch/\(index).bin"] = file.sha256
        }
        lines.append("\(Harness.origin)/fleet/batch/missing.bin")
        let path = try manifestFile(lines.joined(separator: "\n"))
        #expect(try cluster.haul(["enqueue", "--manifest", path, "--batch", "b"]).status == 0)
        try cluster.startWorker(["--concurrency", "4"])
        let wait = try cluster.haul(["wait", "--batch", "b", "--timeout", "60s"])
        #expect(wait.status == 1, "one transfer 404s, so wait reports failure: \(wait.stderr)")
        for (dest, sha) in sums { #expect(cluster.sha256(dest) == sha) }
        let status = try cluster.haul(["status", "--batch", "b", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect((object?["states"] as? [String: Int])?["done"] == 12)
        #expect((object?["states"] as? [String: Int])?["failed"] == 1)
        #expect(try cluster.haul(["wait", "--batch", "nope"]).status == 1)
    }

    @Test("haul wait on ids: 0 when done, 124 on timeout")
    func waitExitCodes() throws {
        let cluster = try Cluster("wait")
        let file = try Origin.file("fleet/wait.bin", size: 50_000)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "w.bin"])
        #expect(try cluster.haul(["wait", String(id), "--timeout", "1s"]).status == 124)
        try cluster.startWorker()
        #expect(try cluster.haul(["wait", String(id), "--timeout", "60s"]).status == 0)
    }

    @Test("the fleet never holds more running segments against a host than its limit")
    func hostLimit() throws {
        let cluster = try Cluster("hostlimit")
        let host = URL(string: Harness.origin)!
        #expect(try cluster.haul(["host-limit", "set", "\(host.host!):\(host.port!)", "3"]).status == 0)
        var ids: [Int64] = []
        for index in 0..<4 {
            // nginx's limit_rate lets the first second's worth through at once, so requests must be
            // well over 4 MB to stay running long enough to be counted.
            let file = try Origin.file("fleet/limit-\(index).bin", size: 16 * 1_048_576)
            ids.append(try cluster.enqueue(Harness.origin + "/slow" + file.path, ["--dest", "l\(index).bin", "--segment-size", "8MiB"]))
        }
        for _ in 0..<3 { try cluster.startWorker(["--concurrency", "4"]) }
        var maximum = 0
        var samples = 0
        try Harness.waitUntil(timeout: 90) {
            // What the fleet holds against the host: running segments and slot-holding probes.
            let running =
                Int(
                    try cluster.database.scalar(
                        "SELECT (SELECT count(*) FROM segments WHERE state = 'running') + (SELECT count(*) FROM transfers WHERE state = 'planning' AND holds_slot)"
                    )) ?? 0
            maximum = max(maximum, running)
            samples += 1
            return try ids.allSatisfy { try cluster.state($0) == "done" }
        }
        #expect(try ids.map { try cluster.state($0) }.allSatisfy { $0 == "done" })
        #expect(maximum <= 3, "at most 3 running against the host, saw \(maximum) in \(samples) samples")
        #expect(maximum >= 2, "the limit still lets several run at once (saw \(maximum))")
    }

    @Test("re-mirroring an unchanged file finishes on 304 without rewriting it; a changed one is replaced")
    func incrementalRemirror() throws {
        let cluster = try Cluster("remirror")
        let name = "fleet/remirror-\(UUID().uuidString.prefix(6)).bin"
        let first = try Origin.file(name, size: 400_000)
        try cluster.startWorker()
        let one = try cluster.enqueue(Harness.origin + first.path, ["--dest", "r.bin"])
        #expect(try cluster.waitFinal([one]) == ["done"])
        let inode = try FileManager.default.attributesOfItem(atPath: cluster.storage + "/r.bin")[.systemFileNumber] as? Int

        let two = try cluster.enqueue(Harness.origin + first.path, ["--dest", "r.bin"])
        #expect(try cluster.waitFinal([two]) == ["done"])
        #expect(try cluster.status(two)["unchanged"] as? Bool == true)
        // Nothing was fetched, yet the file is all there: not "0 B / 391 KiB (0%)".
        let listed = try cluster.haul(["list"]).stdout.split(separator: "\n").first { $0.hasPrefix("\(two) ") }
        #expect(listed?.contains("done") == true && listed?.contains("390.6 KiB, unchanged") == true, "\(listed ?? "")")
        #expect(try cluster.haul(["status", String(two)]).stdout.contains("progress:  390.6 KiB, unchanged"))
        #expect(try FileManager.default.attributesOfItem(atPath: cluster.storage + "/r.bin")[.systemFileNumber] as? Int == inode)

        usleep(1_100_000)  // Last-Modified has one-second resolution.
        let changed = try Origin.file(name, size: 500_000)
        let three = try cluster.enqueue(Harness.origin + changed.path, ["--dest", "r.bin"])
        #expect(try cluster.waitFinal([three]) == ["done"])
        #expect(try cluster.status(three)["unchanged"] as? Bool == false)
        #expect(cluster.sha256("r.bin") == changed.sha256)
    }

    /// A transfer enqueued without `--dest` learns its name from its probe: enqueued again, it
    /// asks the origin for a newer version than the file its last such transfer saved.
    @Test("a re-mirror of a URL the origin names keeps the file the origin answers 304 for, under its name")
    func originNamedRemirror() throws {
        let cluster = try Cluster("remirror-named")
        let tag = UUID().uuidString.prefix(6)
        let file = try Origin.file("fleet/named-\(tag).bin", size: 400_000)
        try cluster.startWorker()
        let one = try cluster.enqueue(Harness.origin + file.path)
        #expect(try cluster.waitFinal([one]) == ["done"])
        let inode = try FileManager.default.attributesOfItem(atPath: cluster.storage + "/named-\(tag).bin")[.systemFileNumber] as? Int

        let two = try cluster.enqueue(Harness.origin + file.path)
        #expect(try cluster.waitFinal([two]) == ["done"])
        let status = try cluster.status(two)
        #expect(status["unchanged"] as? Bool == true && status["dest"] as? String == "named-\(tag).bin", "\(status)")
        #expect(Origin.requests(for: file.path).last?.contains("\" 304 ") == true)
        #expect(try FileManager.default.attributesOfItem(atPath: cluster.storage + "/named-\(tag).bin")[.systemFileNumber] as? Int == inode)

        // Its own unchanged transfer is the version the next re-mirror asks against.
        let three = try cluster.enqueue(Harness.origin + file.path)
        #expect(try cluster.waitFinal([three]) == ["done"])
        #expect(try cluster.status(three)["unchanged"] as? Bool == true)
        usleep(1_100_000)  // Last-Modified has one-second resolution.
        let changed = try Origin.file("fleet/named-\(tag).bin", size: 500_000)
        let four = try cluster.enqueue(Harness.origin + file.path)
        #expect(try cluster.waitFinal([four]) == ["done"])
        #expect(try cluster.status(four)["unchanged"] as? Bool == false)
        #expect(cluster.sha256("named-\(tag).bin") == changed.sha256)
    }

    /// A fleet transfer whose expected digest was wrong keeps its bytes: `retry --checksum` with
    /// the digest they have publishes them unfetched; a plain `retry` fetches the file again.
    @Test("haul retry --checksum with the digest the kept bytes have publishes them unfetched; a plain retry fetches the file again")
    func retryWithTheRightChecksum() throws {
        let cluster = try Cluster("retry-checksum")
        let file = try Origin.file("fleet/retry-sum-\(UUID().uuidString.prefix(6)).bin", size: 2 * 1_048_576 + 7)
        try cluster.startWorker()
        let wrong = "sha256:" + String(repeating: "0", count: 64)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "sum.bin", "--segment-size", "1MiB", "--checksum", wrong])
        #expect(try cluster.waitFinal([id]) == ["failed"])
        let error = try cluster.status(id)["error"] as? String ?? ""
        #expect(error.contains("'haul retry \(id)' downloads it again (add --checksum ALGO:HEX if the one expected is wrong)"), "\(error)")
        let firstTry = Origin.requests(for: file.path).count
        #expect(try cluster.haul(["retry", String(id)]).status == 0)
        #expect(try cluster.waitFinal([id]) == ["failed"])
        #expect(Origin.requests(for: file.path).count >= firstTry + 3, "a plain retry fetches every segment again")

        let right = "sha256:" + file.sha256.uppercased()
        let two = try cluster.haul(["retry", String(id), "1", "--checksum", right])
        #expect(two.status == 2 && two.stderr.contains("name one transfer id"), "\(two.stderr)")
        let before = Origin.requests(for: file.path).count
        let fixed = try cluster.haul(["retry", String(id), "--checksum", right])
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(cluster.sha256("sum.bin") == file.sha256)
        #expect(Origin.requests(for: file.path).count == before, "the bytes kept were published without a request")
    }

    @Test("higher priority runs first; FIFO within a priority (one by one, and in probe batches of two)", arguments: [1, 2])
    func priorities(batch: Int) throws {
        let cluster = try Cluster("priority-\(batch)")
        var ids: [(Int64, Int)] = []
        for (index, priority) in [0, 5, 0, 9, 5].enumerated() {
            let file = try Origin.file("fleet/prio-\(index).bin", size: 10_000)
            ids.append((try cluster.enqueue(Harness.origin + file.path, ["--dest", "p\(index).bin", "--priority", String(priority)]), priority))
        }
        try cluster.startWorker(["--concurrency", "1", "--roles", "planner,fetcher,finalizer", "--probe-batch", String(batch)])
        try cluster.waitFinal(ids.map(\.0))
        // A batch is claimed in one transaction (one started_at): batches in order, and the
        // batches themselves are the first `batch` transfers by priority, then age.
        let order = try cluster.database.scalar("SELECT string_agg(id::text, ',' ORDER BY started_at, priority DESC, id) FROM transfers")
        let batches = try cluster.database.scalar("SELECT count(DISTINCT started_at) FROM transfers")
        #expect(batches == String((ids.count + batch - 1) / batch))
        let expected = ids.enumerated().sorted { ($0.element.1, -$0.offset) > ($1.element.1, -$1.offset) }.map { String($0.element.0) }.joined(separator: ",")
        #expect(order == expected)
    }

    @Test("haul workers lists live workers; a worker that stops is shown stopped")
    func workerRegistry() throws {
        let cluster = try Cluster("registry")
        let worker = try cluster.startWorker(["--concurrency", "2"])
        try Harness.waitUntil(timeout: 20) { try cluster.database.scalar("SELECT count(*) FROM workers") == "1" }
        let listing = try cluster.haul(["workers", "--json"])
        let rows = try JSONSerialization.jsonObject(with: Data(listing.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.count == 1 && rows.first?["state"] as? String == "alive" && rows.first?["pid"] as? Int == Int(worker.pid), "\(listing.stdout)")
        #expect(rows.first?.keys.contains("rate") == true, "\(listing.stdout)")
        worker.signal(SIGTERM)
        #expect(worker.wait(timeout: 15))
        #expect(try cluster.database.scalar("SELECT stopped_at IS NOT NULL FROM workers") == "t")
    }

    @Test("the registry counts the bytes each worker received")
    func workerBytes() throws {
        let cluster = try Cluster("registry-bytes")
        let file = try Origin.file("fleet/registry.bin", size: 3 * 1_048_576)
        try cluster.startWorker(["--lease", "3s"])
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "r.bin"])
        #expect(try cluster.waitFinal([id]) == ["done"])
        let counted = try Harness.waitUntil(timeout: 20) {
            (Int(try cluster.database.scalar("SELECT bytes_fetched FROM workers")) ?? 0) >= 3 * 1_048_576
        }
        #expect(counted, "heartbeats record the worker's received bytes")
    }

    @Test("prune deletes finished transfers past the retention and nothing else")
    func prune() throws {
        let cluster = try Cluster("prune")
        let file = try Origin.file("fleet/prune.bin", size: 1_000)
        let old = try cluster.enqueue(Harness.origin + file.path, ["--dest", "old.bin"])
        let fresh = try cluster.enqueue(Harness.origin + file.path, ["--dest", "new.bin"])
        try cluster.startWorker()
        try cluster.waitFinal([old, fresh])
        _ = try cluster.database.scalar("UPDATE transfers SET finished_at = now() - interval '8 days' WHERE id = \(old)")
        let pending = try cluster.enqueue(Harness.origin + file.path, ["--dest", "later.bin", "--priority", "-1"])
        let result = try cluster.haul(["prune", "--older-than", "7d", "--json"])
        #expect(result.stdout.contains("\"deleted\":1"), "\(result.stdout)")
        #expect(try cluster.database.scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM transfers") == "\(fresh),\(pending)")
        #expect(FileManager.default.fileExists(atPath: cluster.storage + "/old.bin"), "files are never touched by prune")
    }

    @Test("NOTIFY wakes an idle worker long before its next poll")
    func notifyWakesIdleWorkers() throws {
        let cluster = try Cluster("notify")
        let worker = try Child(
            Harness.haulBinary, ["worker", "--storage", cluster.storage, "--poll-interval", "10m"], environment: ["DATABASE_URL": cluster.database.url])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 15)
        }
        try Harness.waitUntil(timeout: 20) { try cluster.database.scalar("SELECT count(*) FROM workers") == "1" }
        usleep(500_000)  // let every role go idle on its ten-minute poll
        let file = try Origin.file("fleet/notify.bin", size: 3 * 1_048_576)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "n.bin", "--segment-size", "1MiB"])
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"], "only NOTIFY can finish this within the wait: \(worker.stderr)")
        #expect(cluster.sha256("n.bin") == file.sha256)
    }

    @Test("a slot given back by a recorded completion wakes a lane that found the host full")
    func completionWakesALane() throws {
        // A lane claims its next segment while the checkpoint recorder still records the one it
        // finished, whose slot the host still counts: with a limit of one, the claim finds the
        // host full and the lane goes idle. Nothing polls within the test's wait (ten minutes)
        // and a completion sends no NOTIFY: only the recorder's wake-up lets the lanes go on.
        let cluster = try Cluster("completion-wake")
        let host = String(Harness.origin.dropFirst("http://".count))
        #expect(try cluster.haul(["host-limit", "set", host, "1"]).status == 0)
        let worker = try Child(
            Harness.haulBinary, ["worker", "--storage", cluster.storage, "--poll-interval", "10m", "--concurrency", "2"],
            environment: ["DATABASE_URL": cluster.database.url])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 15)
        }
        try Harness.waitUntil(timeout: 20) { try cluster.database.scalar("SELECT count(*) FROM workers") == "1" }
        let file = try Origin.file("fleet/completion-wake.bin", size: 6 * 1_048_576)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "w.bin", "--segment-size", "1MiB"])
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"], "the lanes slept on a free slot: \(worker.stderr)")
        #expect(cluster.sha256("w.bin") == file.sha256)
    }
}
