import Foundation
import HaulPostgres
import HaulTestSupport
import Testing

/// Workers die, freeze, are stopped, and the database restarts; the file still
/// arrives byte for byte, finalized once, and checkpointed bytes are not fetched again.
@Suite("reliability: workers and database")
struct WorkerFaultTests {
    static let mib = Reliability.mebibyte

    // MARK: chaos

    static let chaosCases: [(String, String)] = [("inplace", "1MiB"), ("parts", "1MiB"), ("inplace", "16MiB"), ("parts", "16MiB")]

    /// 1 MiB segments: many claims, rescues and resumes. 16 MiB segments: idle fetchers split
    /// stragglers (remaining ≥ 8 MiB), so splitting is killed mid-way too.
    @Test("chaos: workers SIGKILLed at random and replaced; the file is byte-identical", arguments: chaosCases)
    func chaos(layout: String, segment: String) throws {
        // nginx's /slow/ (limit_rate 4m) lets the first 4 MB of every response through at once, so 1 MiB
        // segments are not slowed at all; the fault origin throttles evenly (1 MiB/s per connection).
        let size = 40 * Self.mib + 4321
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let file = try origin.create("/chaos-\(layout)-\(segment).bin", size: size, ["rate": Self.mib])
        let cluster = try Cluster("chaos-\(layout)-\(segment)")
        let id = try cluster.enqueue(file.url, ["--dest", "chaos.bin", "--segment-size", segment, "--layout", layout])
        let flags = ["--lease", "2s", "--concurrency", "2"]
        var workers = [try cluster.startWorker(flags), try cluster.startWorker(flags)]
        var random = SplitMix64(seed: UInt64(20_261_130 + (layout == "inplace" ? 0 : 1) + (segment == "1MiB" ? 0 : 2)))
        var kills = 0
        let deadline = Date(timeIntervalSinceNow: 150)
        let final: Set<String> = ["done", "failed", "canceled"]
        while Date() < deadline, !final.contains(try cluster.state(id)) {
            // Let the fleet run for 1–2 s (seeded), watching for the end, then kill one worker and replace it.
            let pause = 1.0 + Double(random.next() % 1000) / 1000
            let wake = Date(timeIntervalSinceNow: pause)
            while Date() < wake, !final.contains(try cluster.state(id)) { usleep(50_000) }
            if final.contains(try cluster.state(id)) { break }
            let victim = Int(random.next() % UInt64(workers.count))
            workers[victim].signal(SIGKILL)
            _ = workers[victim].wait(timeout: 10)
            kills += 1
            workers[victim] = try cluster.startWorker(flags)
        }
        let outcome = try cluster.waitFinal([id], timeout: 30)
        let log = workers.map(\.stderr).joined(separator: "\n").split(separator: "\n").filter { $0.contains("WARN") || $0.contains("ERROR") }
        #expect(outcome == ["done"], "\((try? cluster.error(id)) ?? "") — the live workers' warnings: \(log.suffix(12).joined(separator: "\n"))")
        #expect(cluster.sha256("chaos.bin") == file.sha256, "byte-identical after \(kills) kills")
        #expect(kills >= 3, "the chaos was real: \(kills) workers killed mid-transfer")
        #expect(try cluster.status(id)["bytes_done"] as? Int == size)
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")
    }

    // MARK: frozen worker

    @Test("a frozen worker (SIGSTOP) loses its segments to others and is fenced when it wakes", arguments: ["inplace", "parts"])
    func frozenWorker(layout: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/zombie-\(layout).bin", size: 8 * Self.mib + 333, ["rate": Self.mib])
        let cluster = try Cluster("zombie-\(layout)")
        let id = try cluster.enqueue(served.url, ["--dest", "z.bin", "--segment-size", "1MiB", "--layout", layout])
        let frozen = try cluster.startWorker(["--lease", "1s", "--concurrency", "2"])
        try #require(try Harness.waitUntil(timeout: 30) { try cluster.database.segments(id).contains { $0.state == "running" && $0.bytesDone > 0 } })
        frozen.signal(SIGSTOP)
        let frozenID = try cluster.database.scalar("SELECT id FROM workers WHERE pid = \(frozen.pid)")
        let held = try cluster.database.segments(id).filter { $0.worker == frozenID && $0.state == "running" }.map(\.index)
        try #require(!held.isEmpty)

        let rescuer = try cluster.startWorker(["--lease", "1s", "--concurrency", "4"])
        // Frozen inside a transaction, the worker keeps its row locks until the server ends its
        // session (`PostgresConnection.idleTransactionTimeout`, 60 s): the takeover may wait
        // that long, on a loaded machine when the stop lands between two statements of one.
        let takenOver = try Harness.waitUntil(timeout: 90) {
            let rows = try cluster.database.segments(id)
            return held.allSatisfy { index in rows[index].state == "done" || (rows[index].state == "running" && rows[index].worker != frozenID) }
        }
        #expect(takenOver, "the frozen worker's segments \(held) were taken over")
        frozen.signal(SIGCONT)

        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        let woke = Harness.waitUntil(timeout: 20) {
            !Reliability.logLines(frozen, containing: "lease lost").isEmpty || !Reliability.logLines(frozen, containing: "fenced off").isEmpty
        }
        #expect(woke, "the woken worker noticed it was fenced:\n\(frozen.stderr)")
        let finishedAt = try cluster.database.scalar("SELECT finished_at FROM transfers WHERE id = \(id)")
        #expect(cluster.sha256("z.bin") == served.sha256, "the zombie's late bytes never reach the file")
        let finalizations =
            (Reliability.logLines(frozen, containing: "transfer done", "transfer=\(id)")
            + Reliability.logLines(rescuer, containing: "transfer done", "transfer=\(id)")).count
        #expect(finalizations == 1, "finalized exactly once")
        #expect(Reliability.logLines(frozen, containing: "after publishing").isEmpty && Reliability.logLines(rescuer, containing: "after publishing").isEmpty)
        #expect(frozen.isRunning, "the woken worker carries on as a normal worker:\n\(frozen.stderr)")
        // Still exactly right once the woken worker has had time to act on everything it held.
        #expect(try cluster.state(id) == "done")
        #expect(try cluster.database.scalar("SELECT finished_at FROM transfers WHERE id = \(id)") == finishedAt)
        #expect(cluster.sha256("z.bin") == served.sha256)
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")
    }

    // MARK: finalizing

    @Test("a finalization that outlasts its lease is not run twice: right bytes, done once", arguments: ["parts", "inplace"])
    func longFinalization(layout: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // A big file with a checksum: assembling (parts) and hashing take longer than a 300 ms lease.
        let served = try origin.create("/final-\(layout).bin", size: 160 * Self.mib)
        let cluster = try Cluster("final-\(layout)")
        let id = try cluster.enqueue(served.url, ["--dest", "f.bin", "--segment-size", "16MiB", "--layout", layout, "--checksum", "sha256:\(served.sha256)"])
        let workers = [try cluster.startWorker(["--lease", "300ms"]), try cluster.startWorker(["--lease", "300ms"])]
        let final = try cluster.waitFinal([id], timeout: 60)
        #expect(final == ["done"], "\((try? cluster.error(id)) ?? "") state \((try? cluster.state(id)) ?? "")")
        #expect(cluster.sha256("f.bin") == served.sha256)
        let log = workers.map(\.stderr).joined(separator: "\n")
        let done = log.split(separator: "\n").filter { $0.contains("transfer done") }
        #expect(done.count == 1, "finalized once: \(done)")
        #expect(
            !log.contains("after publishing"),
            "no finalizer published after losing its lease:\n\(log.split(separator: "\n").filter { $0.contains("final") }.prefix(8).joined(separator: "\n"))")
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")
    }

    @Test("a finalizer frozen mid-way and woken while another finalizes: right bytes, done once", arguments: ["parts", "inplace"])
    func frozenFinalizer(layout: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/frozen-final-\(layout).bin", size: 160 * Self.mib)
        let cluster = try Cluster("frozen-final-\(layout)")
        // sha512 has no CPU instructions of its own here: hashing 160 MiB keeps the finalizing
        // lease held for a few hundred milliseconds, long enough to catch.
        let id = try cluster.enqueue(served.url, ["--dest", "f.bin", "--segment-size", "16MiB", "--layout", layout, "--checksum", "sha512:\(served.sha512)"])
        let first = try cluster.startWorker(["--lease", "1s"])
        try #require(Harness.waitUntil(timeout: 10) { (try? cluster.database.scalar("SELECT count(*) FROM workers WHERE pid = \(first.pid)")) == "1" })
        let firstID = try cluster.database.scalar("SELECT id FROM workers WHERE pid = \(first.pid)")
        // Poll over one open connection (a fraction of a millisecond a query, where a psql per
        // poll would take tens) and freeze the first worker while it holds the finalizing lease.
        let watch = try PostgresConnection(conninfo: cluster.database.url)
        func row(_ sql: String) throws -> String { try watch.query(sql).first?["row"] ?? "" }
        var caught = false
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline {
            let state = try row("SELECT state || '|' || coalesce(worker_id, '') || '|' || (lease_token IS NOT NULL) AS row FROM transfers WHERE id = \(id)")
            if state == "finalizing|\(firstID)|true" {
                first.signal(SIGSTOP)
                caught = true
                break
            }
            if state.hasPrefix("done") || state.hasPrefix("failed") { break }
        }
        try #require(caught, "the first worker was caught finalizing")
        // The second worker takes the finalizing lease once the first one's has run out; freeze it
        // too, wake the first (it goes on from where it stopped), then wake the second.
        let second = try cluster.startWorker(["--lease", "1s"])
        var secondCaught = false
        let until = Date(timeIntervalSinceNow: 30)
        while Date() < until {
            let state = try row("SELECT state || '|' || coalesce(worker_id, '') AS row FROM transfers WHERE id = \(id)")
            if state.hasPrefix("finalizing|"), !state.hasSuffix("|\(firstID)"), !state.hasSuffix("|") {
                second.signal(SIGSTOP)
                secondCaught = true
                break
            }
            if !state.hasPrefix("finalizing") { break }
        }
        first.signal(SIGCONT)
        // The second worker may finish before it can be frozen; either way it took the lease over,
        // and the first, woken late, must neither publish nor finish the transfer again.
        let finishedMeanwhile = try cluster.state(id) == "done"
        #expect(secondCaught || finishedMeanwhile, "the second worker took over the finalizing lease")
        _ = Harness.waitUntil(timeout: 15) { first.stderr.contains("transfer=\(id)") }
        second.signal(SIGCONT)
        let final = try cluster.waitFinal([id], timeout: 30)
        #expect(final == ["done"], "\((try? cluster.error(id)) ?? "")")
        #expect(cluster.sha256("f.bin") == served.sha256, "the published file is exactly the download")
        let log = [first.stderr, second.stderr].joined(separator: "\n")
        // A finalizer frozen between its rename and its fenced "done" cannot be prevented (a rename
        // and a row update are not one atomic act); what must hold is that the other finalizer
        // confirms that file rather than publishing another, and the transfer is done once.
        #expect(log.split(separator: "\n").filter { $0.contains("transfer done") }.count == 1, "finalized once")
    }

    // MARK: kill -9

    @Test("after kill -9, a new worker resumes each segment from its checkpoint, not from its start")
    func killNineResumes() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let rate = 2 * Self.mib
        // 6 MiB segments: under the 8 MiB a straggler split needs, so segment ends stay put.
        let served = try origin.create("/kill9.bin", size: 24 * Self.mib, ["rate": rate])
        let cluster = try Cluster("kill9")
        let id = try cluster.enqueue(served.url, ["--dest", "k.bin", "--segment-size", "6MiB"])
        let first = try cluster.startWorker(["--lease", "2s", "--concurrency", "2"])
        try #require(
            try Harness.waitUntil(timeout: 30) {
                try cluster.database.segments(id).contains { $0.state == "running" && $0.bytesDone >= 2 * Self.mib && $0.isPartial }
            })
        first.signal(SIGKILL)
        _ = first.wait(timeout: 10)
        let atKill = try cluster.database.segments(id)
        let requestsAtKill = try origin.stats(served.path).count

        try cluster.startWorker(["--lease", "2s", "--concurrency", "2"])
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("k.bin") == served.sha256)
        let stats = try origin.stats(served.path)
        let later = stats.requests.filter { $0.number > requestsAtKill }
        for segment in atKill where segment.isPartial {
            let inside = later.filter { ($0.start ?? -1) >= segment.offset && ($0.start ?? -1) <= segment.lastByte }
            #expect(
                inside.first?.start == segment.offset + segment.bytesDone,
                "segment \(segment.index) resumes at its checkpoint \(segment.offset + segment.bytesDone): \(inside.map { $0.range ?? "-" })")
            #expect(!inside.contains { $0.start == segment.offset }, "segment \(segment.index) is not fetched from its start again")
        }
        let refetched = stats.bodyBytesSent - Int64(served.size)
        // At most what arrived since the last checkpoint: one interval (1 s, well under the 16 MiB
        // bound at this rate) on each of the two running segments, and what was still in flight.
        #expect(refetched <= Int64(4 * rate), "re-fetched \(refetched) bytes: at most about one checkpoint interval per running segment")
    }

    // MARK: signals

    @Test("SIGTERM drains: exit within --grace, segments released with their bytes, a new worker finishes")
    func sigtermDrains() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/drain.bin", size: 12 * Self.mib, ["rate": Self.mib])
        let cluster = try Cluster("drain")
        let id = try cluster.enqueue(served.url, ["--dest", "d.bin", "--segment-size", "2MiB"])
        let worker = try cluster.startWorker(["--concurrency", "3", "--grace", "5s"])
        try #require(try Harness.waitUntil(timeout: 30) { try cluster.database.segments(id).filter { $0.state == "running" && $0.bytesDone > 0 }.count >= 2 })
        worker.signal(SIGTERM)
        #expect(worker.wait(timeout: 5 + 3), "exited within the grace period")
        #expect(worker.exitStatus == 0, "a drained worker exits 0:\n\(worker.stderr)")
        let drained = try cluster.database.segments(id)
        #expect(!drained.contains { $0.state == "running" }, "no row is left running: \(drained)")
        #expect(!drained.contains { $0.state == "failed" }, "\(drained)")
        #expect(drained.filter(\.isPartial).count >= 2, "partial progress is kept: \(drained)")
        let requestsAtStop = try origin.stats(served.path).count

        try cluster.startWorker()
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("d.bin") == served.sha256)
        let later = try origin.stats(served.path).requests.filter { $0.number > requestsAtStop }
        for segment in drained where segment.isPartial {
            #expect(
                later.first { $0.end == segment.lastByte }?.start == segment.offset + segment.bytesDone, "segment \(segment.index) resumes from its kept bytes")
        }
    }

    @Test("rolling restarts (SIGTERM mid-segment, three times) never use up a transfer's attempts")
    func rollingRestarts() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/rolling.bin", size: 6 * Self.mib, ["rate": Self.mib / 2])
        let cluster = try Cluster("rolling")
        let id = try cluster.enqueue(served.url, ["--dest", "r.bin", "--segment-size", "6MiB", "--max-attempts", "2"])
        var progress: Int64 = 0
        for round in 0..<3 {
            let worker = try cluster.startWorker(["--lease", "2s"])
            let moved = try Harness.waitUntil(timeout: 30) {
                try cluster.database.segments(id).contains { $0.state == "running" && $0.bytesDone > progress }
            }
            try #require(moved, "round \(round): the segment is being downloaded")
            worker.signal(SIGTERM)
            #expect(worker.wait(timeout: 15))
            progress = try cluster.database.segments(id).first?.bytesDone ?? 0
            try #require(
                try cluster.state(id) == "downloading", "round \(round): \((try? cluster.error(id)) ?? "") \((try? cluster.database.segments(id)) ?? [])")
        }
        try cluster.startWorker(["--lease", "2s"])
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"], "\((try? cluster.error(id)) ?? "")")
        #expect(cluster.sha256("r.bin") == served.sha256)
    }

    // MARK: leases

    @Test("a live worker keeps its lease through a pause in the body shorter than the stall timeout")
    func leaseOutlivesQuietOrigin() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // Segment 1 pauses for 5 s after 200 kB: well under --stall-timeout (30 s), well over --lease 2s.
        let served = try origin.create("/quiet.bin", size: 3 * Self.mib, ["stall_at": 200_000, "stall_after": 1, "stall_times": 1, "stall_secs": 5])
        let cluster = try Cluster("quiet")
        let id = try cluster.enqueue(served.url, ["--dest", "q.bin", "--segment-size", "1MiB"])
        let worker = try cluster.startWorker(["--lease", "2s", "--concurrency", "2"])
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("q.bin") == served.sha256)
        let stats = try origin.stats(served.path)
        #expect(stats.count == 3, "the paused segment was not taken away and fetched again: \(stats.requests.map { "\($0.range ?? "-") \($0.fault ?? "")" })")
        #expect(Reliability.logLines(worker, containing: "lease lost").isEmpty, "the worker never lost a lease while it was working:\n\(worker.stderr)")
    }
}
