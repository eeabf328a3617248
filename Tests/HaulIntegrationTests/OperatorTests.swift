import Foundation
import HaulPostgres
import HaulTestSupport
import Testing

/// `haul cancel|retry|pause|resume` on live transfers with real workers.
@Suite("reliability: operator commands")
struct OperatorTests {
    static let mib = Reliability.mebibyte

    /// A cluster downloading a rate-limited file (`rate` bytes/s per connection) with one worker,
    /// waited until at least `running` segments have checkpointed bytes.
    static func downloading(
        _ label: String, origin: FaultOrigin, size: Int = 8 * mib, rate: Int = mib / 4, layout: String = "inplace", running: Int = 2,
        enqueue: [String] = [], worker: [String] = []
    ) throws -> (cluster: Cluster, id: Int64, served: FaultOrigin.Served, worker: Child) {
        let served = try origin.create("/\(label).bin", size: size, ["rate": rate])
        let cluster = try Cluster(label)
        let id = try cluster.enqueue(served.url, ["--dest", "out.bin", "--segment-size", "2MiB", "--layout", layout] + enqueue)
        let child = try cluster.startWorker(["--concurrency", "2"] + worker)
        try #require(
            try Harness.waitUntil(timeout: 30) {
                try cluster.database.segments(id).filter { $0.state == "running" && $0.bytesDone > 0 }.count >= running
            })
        return (cluster, id, served, child)
    }

    @Test("cancel stops a running transfer and removes its partial data", arguments: ["inplace", "parts"])
    func cancel(layout: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let (cluster, id, _, worker) = try Self.downloading("cancel-\(layout)", origin: origin, layout: layout)
        let result = try cluster.haul(["cancel", String(id)])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cluster.state(id) == "canceled")
        #expect(try Harness.waitUntil(timeout: 15) { !(try cluster.database.segments(id).contains { $0.state == "running" }) }, "in-flight segments stop")
        let cleaned = Harness.waitUntil(timeout: 20) { cluster.temporaries().isEmpty }
        #expect(cleaned, "partial data is removed from storage: \(cluster.temporaries())")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/out.bin"))
        #expect(worker.isRunning)
        #expect(try cluster.state(id) == "canceled")
    }

    @Test("a canceled transfer can be retried and arrives whole")
    func retryCanceled() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // Three attempts per segment, so a retry that cannot work fails in seconds rather than a minute.
        let (cluster, id, served, _) = try Self.downloading("cancel-retry", origin: origin, enqueue: ["--max-attempts", "3"])
        #expect(try cluster.haul(["cancel", String(id)]).status == 0)
        _ = try Harness.waitUntil(timeout: 15) { !(try cluster.database.segments(id).contains { $0.state == "running" }) }
        // Whether or not the partial data is gone yet, a retry must end with exactly the right bytes.
        _ = Harness.waitUntil(timeout: 10) { cluster.temporaries().isEmpty }
        let retry = try cluster.haul(["retry", String(id)])
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"], "\((try? cluster.error(id)) ?? "")")
        #expect(cluster.sha256("out.bin") == served.sha256)
    }

    @Test("retry of a failed transfer fetches only the missing segments")
    func retryFailed() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // The probe and two more requests succeed, then the origin answers 410 until healed.
        let served = try origin.create("/retry.bin", size: 6 * Self.mib, ["status": 410, "status_after": 3])
        let cluster = try Cluster("retry")
        let id = try cluster.enqueue(served.url, ["--dest", "out.bin", "--segment-size", "1MiB"])
        try cluster.startWorker(["--concurrency", "1"])
        #expect(try cluster.waitFinal([id], timeout: 30) == ["failed"])
        #expect(try cluster.error(id).contains("410"))
        let atFailure = try cluster.database.segments(id)
        let requestsAtFailure = try origin.stats(served.path).count
        #expect(atFailure.contains { $0.state == "done" }, "some segments were done before the failure: \(atFailure)")

        try origin.heal(served.path)
        let retry = try cluster.haul(["retry", String(id)])
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"], "\((try? cluster.error(id)) ?? "")")
        #expect(cluster.sha256("out.bin") == served.sha256)
        let later = try origin.stats(served.path).requests.filter { $0.number > requestsAtFailure }
        for segment in atFailure where segment.state == "done" {
            #expect(
                !later.contains { ($0.start ?? -1) >= segment.offset && ($0.start ?? -1) <= segment.lastByte },
                "done segment \(segment.index) is not fetched again")
        }
        for segment in atFailure where segment.state != "done" {
            #expect(
                later.filter { $0.end == segment.lastByte }.first?.start == segment.offset + segment.bytesDone,
                "segment \(segment.index) is fetched from its kept bytes")
        }
        #expect(later.count == atFailure.filter { $0.state != "done" }.count, "one request per missing segment: \(later.map { $0.range ?? "-" })")
    }

    @Test("pause releases running segments with their bytes and claims nothing; resume continues from them")
    func pauseResume() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // 256 KiB/s per connection: a 2 MiB segment takes 8 s, so the pause lands mid-segment.
        let (cluster, id, served, worker) = try Self.downloading("pause", origin: origin, rate: Self.mib / 4, worker: ["--lease", "3s"])
        let pause = try cluster.haul(["pause", String(id)])
        #expect(pause.status == 0, "\(pause.stderr)")
        #expect(try cluster.state(id) == "paused")
        #expect(try Harness.waitUntil(timeout: 15) { !(try cluster.database.segments(id).contains { $0.state == "running" }) }, "running segments are released")
        let atPause = try cluster.database.segments(id)
        #expect(atPause.filter(\.isPartial).count >= 1, "their bytes are kept: \(atPause)")
        let requestsAtPause = try origin.stats(served.path).count
        // Let the worker go through several poll rounds (its heartbeat moves every second with a 3 s lease).
        let workerID = try cluster.database.scalar("SELECT id FROM workers WHERE pid = \(worker.pid)")
        let beat = try cluster.database.scalar("SELECT heartbeat_at FROM workers WHERE id = '\(workerID)'")
        _ = try Harness.waitUntil(timeout: 10) { try cluster.database.scalar("SELECT heartbeat_at FROM workers WHERE id = '\(workerID)'") != beat }
        #expect(try origin.stats(served.path).count == requestsAtPause, "nothing is fetched while paused")
        #expect(try cluster.database.segments(id).map(\.bytesDone) == atPause.map(\.bytesDone))

        let resume = try cluster.haul(["resume", String(id)])
        #expect(resume.status == 0, "\(resume.stderr)")
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.sha256)
        let later = try origin.stats(served.path).requests.filter { $0.number > requestsAtPause }
        for segment in atPause where segment.isPartial {
            #expect(
                later.first { $0.end == segment.lastByte }?.start == segment.offset + segment.bytesDone, "segment \(segment.index) resumes from its kept bytes")
        }
    }

    /// A process frozen inside a transaction (Ctrl-Z, a paused VM) keeps its row locks until the
    /// server ends its session, a minute later: the operator is told at once instead of waiting.
    @Test("an action on a transfer another session holds locked gives up with a message, changing nothing; once let go, it acts")
    func lockedRowIsNotWaitedFor() throws {
        let cluster = try Cluster("op-locked")
        let id = try cluster.enqueue("http://127.0.0.1:9/locked.bin", ["--dest", "locked.bin"])
        let holder = try PostgresConnection(conninfo: cluster.database.url)
        try holder.query("BEGIN")
        try holder.query("SELECT 1 FROM transfers WHERE id = $1 FOR UPDATE", [id])
        let paused = try cluster.haul(["pause", String(id)])
        #expect(paused.status == 1)
        #expect(paused.stderr.contains("transfer \(id) is locked by another database session"), "\(paused.stderr)")
        #expect(paused.stderr.split(separator: "\n").count == 1, "one line: \(paused.stderr)")
        #expect(try cluster.state(id) == "pending")
        try holder.query("ROLLBACK")
        #expect(try cluster.haul(["pause", String(id)]).status == 0)
        #expect(try cluster.state(id) == "paused")
    }

    @Test("invalid transitions are refused with exit status 1 and a message, and change nothing")
    func invalidTransitions() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let small = try origin.create("/small.bin", size: 300_000)
        // 64 KiB/s per connection: the "running" transfer stays downloading for the whole test.
        let slow = try origin.create("/invalid.bin", size: 8 * Self.mib, ["rate": Self.mib / 16])
        let cluster = try Cluster("invalid")
        let done = try cluster.enqueue(small.url, ["--dest", "small.bin"])
        let failed = try cluster.enqueue(origin.base + "/missing.bin", ["--dest", "missing.bin"])
        try cluster.startWorker(["--concurrency", "2"])
        #expect(try cluster.waitFinal([done, failed], timeout: 30) == ["done", "failed"])
        let running = try cluster.enqueue(slow.url, ["--dest", "out.bin", "--segment-size", "2MiB"])
        try #require(try Harness.waitUntil(timeout: 30) { try cluster.database.segments(running).contains { $0.state == "running" && $0.bytesDone > 0 } })

        let refusals: [(action: String, id: Int64, state: String, words: [String])] = [
            ("resume", running, "downloading", ["downloading", "resumed", "paused"]),
            ("retry", running, "downloading", ["downloading", "retried"]),
            ("retry", done, "done", ["done", "retried"]),
            ("pause", done, "done", ["done", "paused"]),
            ("resume", done, "done", ["done", "resumed"]),
            ("cancel", done, "done", ["done", "canceled"]),
            ("pause", failed, "failed", ["failed", "paused"]),
            ("resume", failed, "failed", ["failed", "resumed"]),
        ]
        for refusal in refusals {
            let result = try cluster.haul([refusal.action, String(refusal.id)])
            #expect(result.status == 1, "\(refusal.action) of a \(refusal.state) transfer exits 1: \(result.status) \(result.stderr)")
            #expect(result.stderr.hasPrefix("haul: ") && refusal.words.allSatisfy { result.stderr.contains($0) }, "\(refusal.action): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"))
            #expect(try cluster.state(refusal.id) == refusal.state, "a refused \(refusal.action) changes nothing")
        }
        let missing = try cluster.haul(["cancel", "987654"])
        #expect(missing.status == 1 && missing.stderr.contains("no transfer 987654"), "\(missing.stderr)")

        // Pausing twice is a no-op the second time (as kubectl treats an unchanged apply); canceling twice is refused.
        #expect(try cluster.haul(["pause", String(running)]).status == 0)
        let again = try cluster.haul(["pause", String(running)])
        #expect(again.status == 0 && again.stdout.contains("already paused"), "\(again.stdout) \(again.stderr)")
        #expect(try cluster.state(running) == "paused")
        #expect(try cluster.haul(["cancel", String(running)]).status == 0)
        let twice = try cluster.haul(["cancel", String(running)])
        #expect(twice.status == 1 && twice.stderr.contains("canceled"), "\(twice.stderr)")
    }
}
