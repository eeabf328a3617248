import Foundation
import HaulTestSupport
import Testing

/// `status` and `wait` say when no worker is alive; `wait` shows bytes and rate.
@Suite("worker presence")
struct WorkerPresenceTests {
    @Test("status and wait warn when no worker has ever run, or none has been seen for minutes")
    func noWorker() throws {
        let cluster = try Cluster("noworker")
        let id = try cluster.enqueue("http://127.0.0.1:9/x.bin", ["--dest", "x.bin"])
        let never = try cluster.haul(["status", String(id)])
        #expect(never.status == 0 && never.stdout.contains("warning:   no worker has ever run against this database"), "\(never.stdout)")
        // A worker that heartbeated 2 minutes ago and then vanished (kill -9, a lost host).
        _ = try Run.psql(
            cluster.database.url,
            "INSERT INTO workers (id, host, pid, roles, version, started_at, heartbeat_at) VALUES ('gone', 'h', 1, 'fetcher', 'x', now() - interval '1 hour', now() - interval '130 seconds')"
        )
        let json = try cluster.status(id)
        #expect((json["warning"] as? String ?? "").contains("no worker has been seen for 2 min; is one running against this database?"), "\(json)")
        let waited = try cluster.haul(["wait", String(id), "--timeout", "1s"])
        #expect(waited.status == 124 && waited.stderr.contains("no worker has been seen for 2 min"), "\(waited.stderr)")
        let batchless = try cluster.haul(["status", String(id)])
        #expect(batchless.stdout.contains("warning:"))
    }

    @Test("haul workers shows a dead worker's rate as 0, not the last one it reported, and a new one's as not measured yet")
    func deadWorkerRate() throws {
        let cluster = try Cluster("deadrate")
        _ = try Run.psql(
            cluster.database.url,
            """
            INSERT INTO workers (id, host, pid, roles, version, started_at, heartbeat_at, rate) VALUES
                ('gone', 'h1', 1, 'fetcher', 'x', now() - interval '1 hour', now() - interval '2 minutes', 5000000),
                ('here', 'h2', 2, 'fetcher', 'x', now() - interval '1 hour', now(), 3000000),
                ('new', 'h3', 3, 'fetcher', 'x', now(), now(), 0)
            """)
        let listed = try cluster.haul(["workers", "--json"])
        let workers = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: workers.map { ($0["id"] as? String ?? "", $0) })
        #expect(byID["gone"]?["state"] as? String == "dead")
        #expect(byID["gone"]?["rate"] as? Double == 0, "\(workers)")
        #expect(byID["here"]?["rate"] as? Double == 3_000_000, "\(workers)")
        // One heartbeat gives no rate: it is unknown, not 0 B/s (it may be downloading).
        #expect(byID["new"]?["rate"] is NSNull, "\(workers)")
        let text = try cluster.haul(["workers"])
        let gone = text.stdout.split(separator: "\n").first { $0.hasPrefix("gone") }
        #expect(gone?.contains("0 B/s") == true, "\(text.stdout)")
        let new = text.stdout.split(separator: "\n").first { $0.hasPrefix("new") }
        #expect(new?.contains("measuring") == true && new?.contains("B/s") == false, "\(text.stdout)")
    }

    @Test("with a live worker there is no warning, and wait reports bytes and a rate")
    func liveWorker() throws {
        let cluster = try Cluster("liveworker")
        let file = try Origin.file("cli/presence.bin", size: 24 << 20)
        // nginx's /slow/ location sends 4 MiB/s per connection: the transfer lasts a few seconds.
        let id = try cluster.enqueue(Harness.origin + "/slow" + file.path, ["--dest", "p.bin", "--segment-size", "8MiB"])
        try cluster.startWorker(["--concurrency", "3"])
        try #require(try Harness.waitUntil(timeout: 30) { (try cluster.status(id)["bytes_done"] as? Int ?? 0) > 0 })
        let status = try cluster.haul(["status", String(id)])
        #expect(!status.stdout.contains("warning"), "\(status.stdout)")
        let waited = try cluster.haul(["wait", String(id), "--timeout", "2m"])
        #expect(waited.status == 0, "\(waited.stderr)")
        let lines = waited.stderr.split(separator: "\n")
        #expect(lines.last?.contains("1/1 done, 0 failed or canceled, 24.0 MiB / 24.0 MiB at ") == true, "\(waited.stderr)")
        #expect(lines.last?.hasSuffix("/s") == true && !waited.stderr.contains("warning"), "the rate is shown: \(waited.stderr)")
    }
}
