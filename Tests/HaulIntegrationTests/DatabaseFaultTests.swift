import Foundation
import HaulPostgres
import HaulTestSupport
import Testing

/// The database goes away under working workers: they stop within their grace period, keep
/// streaming to storage meanwhile, and finish once it is back. Part of the same suite as the
/// worker faults (`ChaosTests.swift`).
extension WorkerFaultTests {
    @Test("with the database gone, SIGTERM still exits within --grace, and a second signal exits at once")
    func graceWithoutDatabase() throws {
        let postgres = try PrivatePostgres()
        defer { withExtendedLifetime(postgres) {} }
        let url = try postgres.database()
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/grace.bin", size: 8 * Self.mib, ["rate": Self.mib / 2])
        let enqueued = try Run.haul(["enqueue", served.url, "--dest", "g.bin", "--segment-size", "2MiB"], database: url)
        try #require(enqueued.status == 0, "\(enqueued.stderr)")
        let storage = Harness.temporaryDirectory("grace")
        defer { try? FileManager.default.removeItem(atPath: storage) }
        func worker(_ grace: String) throws -> Child {
            try Child(
                Harness.haulBinary, ["worker", "--storage", storage, "--poll-interval", "200ms", "--concurrency", "2", "--grace", grace],
                environment: ["DATABASE_URL": url])
        }
        let patient = try worker("3s")
        let impatient = try worker("60s")
        try #require(
            try Harness.waitUntil(timeout: 30) {
                Int(
                    try Run.psql(url, "SELECT count(*) FROM segments WHERE state = 'running' AND bytes_done > 0").stdout.trimmingCharacters(
                        in: .whitespacesAndNewlines)) ?? 0 >= 2
            })
        try postgres.stop()

        patient.signal(SIGTERM)
        #expect(patient.wait(timeout: 3 + 4), "a worker told --grace 3s exits within 7s of SIGTERM even with the database gone:\n\(patient.stderr)")

        impatient.signal(SIGTERM)
        try #require(Harness.waitUntil(timeout: 10) { impatient.stderr.contains("stopping") })
        impatient.signal(SIGTERM)
        #expect(impatient.wait(timeout: 3), "a second signal exits at once")
        #expect(impatient.exitStatus == 130)
    }

    // MARK: database outages

    @Test("a worker's /healthz says the database is lost within seconds of it stopping, and ok again once it is back")
    func healthzFollowsTheDatabase() throws {
        let postgres = try PrivatePostgres()
        defer { withExtendedLifetime(postgres) {} }
        let url = try postgres.database()
        let storage = Harness.temporaryDirectory("healthz-db")
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let port = Reliability.freePort()
        let worker = try Child(
            Harness.haulBinary, ["worker", "--storage", storage, "--poll-interval", "200ms", "--metrics-addr", "127.0.0.1:\(port)"],
            environment: ["DATABASE_URL": url])
        defer { worker.signal(SIGKILL) }
        try #require(Harness.waitUntil(timeout: 30) { try WorkerStartTests.healthz(port).code == "200" })

        try postgres.stop()
        // The old window was max(15 s, three heartbeats): 10 s is well inside it.
        #expect(try Harness.waitUntil(timeout: 10) { try WorkerStartTests.healthz(port).code == "503" }, "the lost database shows in /healthz")
        #expect(try WorkerStartTests.healthz(port).body.contains("database unreachable"))

        try postgres.start()
        #expect(try Harness.waitUntil(timeout: 30) { try WorkerStartTests.healthz(port).code == "200" }, "and ok once it is back")
    }

    @Test("an idle worker that polls rarely says the database is lost as soon as its LISTEN connection breaks")
    func healthzOfAnIdleWorker() throws {
        let postgres = try PrivatePostgres()
        defer { withExtendedLifetime(postgres) {} }
        let url = try postgres.database()
        let storage = Harness.temporaryDirectory("healthz-idle")
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let port = Reliability.freePort()
        // Polls every 10 s or more and beats every 20 s: neither would find the loss within 5 s.
        let worker = try Child(
            Harness.haulBinary, ["worker", "--storage", storage, "--poll-interval", "10s", "--lease", "60s", "--metrics-addr", "127.0.0.1:\(port)"],
            environment: ["DATABASE_URL": url])
        defer { worker.signal(SIGKILL) }
        try #require(Harness.waitUntil(timeout: 30) { try WorkerStartTests.healthz(port).code == "200" })
        Thread.sleep(forTimeInterval: 1)  // past the first poll

        try postgres.stop()
        #expect(try Harness.waitUntil(timeout: 5) { try WorkerStartTests.healthz(port).code == "503" }, "the lost database shows in /healthz at once")
        try postgres.start()
        #expect(try Harness.waitUntil(timeout: 30) { try WorkerStartTests.healthz(port).code == "200" }, "and ok once it is back")
    }

    @Test("while PostgreSQL is down, downloads keep streaming to storage; the transfer completes when it is back")
    func streamsThroughOutage() throws {
        let postgres = try PrivatePostgres()
        defer { withExtendedLifetime(postgres) {} }
        let url = try postgres.database()
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // 4 MiB segments: under the 8 MiB a straggler split needs, so each segment is requested once.
        let served = try origin.create("/outage.bin", size: 16 * Self.mib, ["rate": Self.mib])
        let enqueued = try Run.haul(["enqueue", served.url, "--dest", "o.bin", "--segment-size", "4MiB", "--layout", "parts"], database: url)
        try #require(enqueued.status == 0, "\(enqueued.stderr)")
        let storage = Harness.temporaryDirectory("outage")
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let worker = try Child(
            Harness.haulBinary, ["worker", "--storage", storage, "--poll-interval", "200ms", "--concurrency", "2"], environment: ["DATABASE_URL": url])
        try #require(
            try Harness.waitUntil(timeout: 30) {
                Int(
                    try Run.psql(url, "SELECT count(*) FROM segments WHERE state = 'running' AND bytes_done >= 1048576").stdout.trimmingCharacters(
                        in: .whitespacesAndNewlines)) ?? 0 >= 1
            })
        func onStorage() -> Int64 {
            let parts = storage + "/o.bin.haul-parts"
            return ((try? FileManager.default.contentsOfDirectory(atPath: parts)) ?? []).reduce(Int64(0)) { total, name in
                total + Int64((try? FileManager.default.attributesOfItem(atPath: parts + "/" + name)[.size] as? Int) ?? 0)
            }
        }
        try postgres.stop()
        let before = onStorage()
        let streamed = Harness.waitUntil(timeout: 15) { onStorage() >= before + 3 * Int64(Self.mib) }
        #expect(streamed, "bytes kept reaching storage during the outage (\(before) → \(onStorage()))")
        try postgres.start()
        #expect(try Harness.waitUntil(timeout: 60) { try Run.psql(url, "SELECT state FROM transfers").stdout.contains("done") })
        #expect(Origin.sha256(file: storage + "/o.bin") == served.sha256)
        #expect(worker.isRunning, "\(worker.stderr)")
        let requests = try origin.stats(served.path).requests
        #expect(
            requests.count == 4,
            "no segment was fetched again because of the outage: \(requests.map { "\($0.range ?? "-") sent=\($0.sent) \($0.fault ?? "")" })\n\(worker.stderr)")
        worker.signal(SIGTERM)
        _ = worker.wait(timeout: 15)
    }

    // MARK: database restarts

    @Test("haul wait rides out a PostgreSQL restart: it exits 0 when the transfer is done, not 1 as for a failure")
    func waitAcrossRestart() throws {
        let postgres = try PrivatePostgres()
        defer { withExtendedLifetime(postgres) {} }
        let url = try postgres.database()
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/wait-restart.bin", size: 8 * Self.mib, ["rate": 2 * Self.mib])
        let enqueued = try Run.haul(["enqueue", served.url, "--dest", "w.bin", "--segment-size", "4MiB", "--json"], database: url)
        try #require(enqueued.status == 0, "\(enqueued.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(enqueued.stdout.utf8)) as? [String: Any])
        let id = try #require(object["id"] as? Int)
        let storage = Harness.temporaryDirectory("wait-restart")
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let worker = try Child(
            Harness.haulBinary, ["worker", "--storage", storage, "--poll-interval", "200ms", "--concurrency", "2"], environment: ["DATABASE_URL": url])
        defer { worker.signal(SIGTERM); _ = worker.wait(timeout: 15) }
        let wait = try Child(Harness.haulBinary, ["wait", String(id), "--timeout", "120s"], environment: ["DATABASE_URL": url])
        try #require(
            try Harness.waitUntil(timeout: 30) {
                Int(try Run.psql(url, "SELECT coalesce(sum(bytes_done), 0) FROM segments").stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0
            })
        try postgres.restart()
        #expect(wait.wait(timeout: 120))
        #expect(wait.exitStatus == 0, "haul wait exited \(String(describing: wait.exitStatus)):\n\(wait.stderr)")
        #expect(wait.stderr.contains("lost the database") && wait.stderr.contains("the database is back"), "\(wait.stderr)")
        #expect(Origin.sha256(file: storage + "/w.bin") == served.sha256)
    }

    @Test("PostgreSQL restarts twice mid-transfer: the transfer completes, workers keep running, nothing is fetched twice")
    func databaseRestarts() throws {
        let postgres = try PrivatePostgres()
        defer { withExtendedLifetime(postgres) {} }
        let url = try postgres.database()
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/pg-restart.bin", size: 24 * Self.mib, ["rate": 2 * Self.mib])
        let enqueued = try Run.haul(["enqueue", served.url, "--dest", "p.bin", "--segment-size", "4MiB", "--json"], database: url)
        try #require(enqueued.status == 0, "\(enqueued.stderr)")
        let storage = Harness.temporaryDirectory("pg-restart")
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let workers = try (0..<2).map { _ in
            try Child(
                Harness.haulBinary, ["worker", "--storage", storage, "--poll-interval", "200ms", "--concurrency", "2"], environment: ["DATABASE_URL": url])
        }
        func bytesDone() throws -> Int64 {
            Int64(try Run.psql(url, "SELECT coalesce(sum(bytes_done), 0) FROM segments").stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        func state() throws -> String {
            try Run.psql(url, "SELECT state FROM transfers").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        try #require(try Harness.waitUntil(timeout: 30) { try bytesDone() > 0 })
        for restart in 1...2 {
            let before = try bytesDone()
            try postgres.restart()
            let moved = try Harness.waitUntil(timeout: 30) { try bytesDone() > before || state() == "done" }
            #expect(moved, "restart \(restart): progress is recorded again after the database is back")
        }
        #expect(try Harness.waitUntil(timeout: 90) { try state() == "done" }, "state \((try? state()) ?? "")")
        #expect(Origin.sha256(file: storage + "/p.bin") == served.sha256)
        for worker in workers {
            #expect(worker.isRunning, "the worker survived both restarts:\n\(worker.stderr)")
        }
        let log = workers.map(\.stderr).joined()
        #expect(log.contains("database unreachable") && log.contains("database is back"), "the outage was seen and ended:\n\(log)")
        let stats = try origin.stats(served.path)
        #expect(stats.count == 6, "each of the six segments was requested once; no download was thrown away: \(stats.requests.map { $0.range ?? "-" })")
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers { _ = worker.wait(timeout: 15) }
    }
}
