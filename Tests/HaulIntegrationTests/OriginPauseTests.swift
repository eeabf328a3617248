import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Testing

/// A limit of 0 pauses an origin: the claims take nothing of it, and setting it back lets them.
@Suite("origin pause")
struct OriginPauseTests {
    @Test("an origin at limit 0 gets no segment or probe claimed, and runs again once resumed")
    func pausedOriginClaimsNothing() throws {
        let database = try TestDatabase()
        _ = try LeaseProtocolTests.downloading(database, segments: 2, host: "paused.test:8080")
        let enqueued = try Run.haul(["enqueue", "http://paused.test:8080/new.bin", "--dest", "new.bin"], database: database.url)
        try #require(enqueued.status == 0, "\(enqueued.stderr)")
        let pending = try #require(Int64(try database.scalar("SELECT max(id) FROM transfers")))
        let set = try Run.haul(["host-limit", "set", "paused.test:8080", "3"], database: database.url)
        try #require(set.status == 0, "\(set.stderr)")

        let pause = try Run.haul(["host-limit", "set", "paused.test:8080", "0"], database: database.url)
        #expect(pause.status == 0 && pause.stdout.contains("paused"), "\(pause.stdout)\(pause.stderr)")
        let connection = try PostgresConnection(conninfo: database.url)
        #expect(try SegmentLeases(connection, workerID: "a").claim(limit: 4, lease: 60).isEmpty, "no segment of a paused origin is claimed")
        #expect(try TransferLeases(connection, workerID: "a").claimPlanning(lease: 60, limit: 10, connections: 4).claims.isEmpty, "no probe either")
        let status = try Run.haul(["status", String(pending)], database: database.url)
        #expect(status.stdout.contains("waiting:   its origin paused.test:8080 is paused"), "\(status.stdout)")
        let json = try Run.haul(["status", String(pending), "--json"], database: database.url)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["waiting_reason"] as? String == "origin-paused", "\(json.stdout)")
        let waiting = try Run.haul(["list", "--state", "pending"], database: database.url)
        #expect(waiting.stdout.contains("waits: its origin paused.test:8080 is paused"), "\(waiting.stdout)")
        let list = try Run.haul(["host-limit", "list"], database: database.url)
        #expect(list.stdout.contains("(paused)"), "\(list.stdout)")

        let resume = try Run.haul(["host-limit", "resume", "paused.test:8080"], database: database.url)
        #expect(resume.status == 0 && resume.stdout.contains("at most 3"), "the limit it had before comes back: \(resume.stdout)\(resume.stderr)")
        #expect(try SegmentLeases(connection, workerID: "a").claim(limit: 4, lease: 60).count == 2)
        #expect(try TransferLeases(connection, workerID: "a").claimPlanning(lease: 60, limit: 10, connections: 4).claims.map(\.info.id) == [pending])
    }

    @Test("a host limit names an origin as its URLs do, and says when no transfer came from the host named")
    func hostNames() throws {
        let database = try TestDatabase()
        for url in ["https://named.test:443/a", "https://NAMED.test/b", "http://named.test:80/c", "http://named.test:8080/d"] {
            let enqueued = try Run.haul(["enqueue", url, "--dest", "n/\(url.suffix(1))"], database: database.url)
            try #require(enqueued.status == 0, "\(enqueued.stderr)")
        }
        #expect(try database.scalar("SELECT string_agg(host, ',' ORDER BY id) FROM transfers") == "named.test,named.test,named.test,named.test:8080")
        let listed = try Run.haul(["list", "--host", "Named.test:443"], database: database.url)
        #expect(listed.stdout.split(separator: "\n").count == 4, "a header and the three of named.test: \(listed.stdout)")
        let spelled = try Run.haul(["host-limit", "set", "named.test:443", "2"], database: database.url)
        #expect(
            spelled.status == 0 && spelled.stdout == "named.test: at most 2 running segments\n" && spelled.stderr.isEmpty, "\(spelled.stdout)\(spelled.stderr)")
        let bare = try Run.haul(["host-limit", "pause", "other.test"], database: database.url)
        #expect(bare.status == 0 && bare.stderr.contains("note: no transfer has come from other.test yet"), "\(bare.stderr)")
        let portless = try Run.haul(["host-limit", "pause", "named.test:9"], database: database.url)
        #expect(portless.stderr.contains("transfers came from named.test, named.test:8080: name one of those"), "\(portless.stderr)")
        let known = try Run.haul(["host-limit", "pause", "named.test:8080"], database: database.url)
        #expect(known.status == 0 && known.stderr.isEmpty, "\(known.stderr)")
    }

    @Test("a worker runs nothing of a paused origin and finishes its transfer once resumed")
    func workerWaitsForResume() throws {
        let cluster = try Cluster("origin-pause")
        let host = String(Harness.origin.split(separator: "/").last!)
        #expect(try cluster.haul(["host-limit", "pause", host]).status == 0)
        let file = try Origin.file("pause/\(UUID().uuidString.prefix(8)).bin", size: 3 << 20)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "paused.bin"])
        try cluster.startWorker()
        _ = try Harness.waitUntil(timeout: 20) { try cluster.database.scalar("SELECT count(*) FROM workers") != "0" }
        Thread.sleep(forTimeInterval: 2)  // ten of the worker's polls
        #expect(try cluster.state(id) == "pending", "the transfer waits while its origin is paused")
        #expect(try cluster.database.scalar("SELECT count(*) FROM segments WHERE transfer_id = \(id)") == "0", "no segment ran")

        #expect(try cluster.haul(["host-limit", "resume", host]).status == 0)
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(cluster.sha256("paused.bin") == file.sha256)
    }
}
