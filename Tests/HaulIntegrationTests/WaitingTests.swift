import Foundation
import HaulTestSupport
import Testing

/// `haul status` (`waiting`) and `haul list` say why an active transfer does not run.
@Suite("why work waits")
struct WaitingTests {
    /// `127.0.0.1:PORT`, the origin host as `haul host-limit` names it.
    static func host(_ url: String) -> String {
        String(url.split(separator: "/")[1])
    }

    static func waiting(_ cluster: Cluster, _ id: Int64) throws -> String {
        try cluster.status(id)["waiting"] as? String ?? ""
    }

    /// The reason's stable name in `haul status --json` (`waiting_reason`).
    static func reason(_ cluster: Cluster, _ id: Int64) throws -> String? {
        try cluster.status(id)["waiting_reason"] as? String
    }

    @Test("the second transfer of an origin at its limit of 1 waits for it: 1/1")
    func hostLimit() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let first = try origin.create("/first.bin", size: 4 << 20, ["rate": 100_000])
        let second = try origin.create("/second.bin", size: 4 << 20, ["rate": 100_000])
        let cluster = try Cluster("wait-limit")
        let host = Self.host(first.url)
        #expect(try cluster.haul(["host-limit", "set", host, "1"]).status == 0)
        let a = try cluster.enqueue(first.url, ["--dest", "a.bin", "--segment-size", "1MiB"])
        let b = try cluster.enqueue(second.url, ["--dest", "b.bin", "--segment-size", "1MiB"])
        try cluster.startWorker()
        var said = ""
        let expected = "waits: its origin \(host) is at its limit (1/1 running)"
        #expect(
            try Harness.waitUntil(timeout: 30) {
                let running = try cluster.database.scalar("SELECT count(*) FROM segments WHERE state = 'running'")
                said = try Self.waiting(cluster, a) + "|" + Self.waiting(cluster, b)
                return running == "1" && said.contains(expected)
            }, "one transfer runs, the other waits for the limit: \(said)")
        #expect(try cluster.haul(["list"]).stdout.contains(expected))
        let waiter = said.hasPrefix(expected) ? a : b
        #expect(try Self.reason(cluster, waiter) == "host-limit")
    }

    @Test("a transfer whose origin answered 503 backs off until a time, with the error")
    func backingOff() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/busy.bin", size: 2 << 20, ["status": 503, "status_after": 1, "retry_after": 30])
        let cluster = try Cluster("wait-backoff")
        let id = try cluster.enqueue(served.url, ["--dest", "out.bin", "--segment-size", "1MiB"])
        try cluster.startWorker()
        var said = ""
        #expect(
            try Harness.waitUntil(timeout: 30) {
                said = try Self.waiting(cluster, id)
                return said.hasPrefix("waits: backing off until ")
            }, "\(said)")
        #expect(said.contains(" UTC after: ") && said.contains("503"), "\(said)")
        #expect(try Self.reason(cluster, id) == "backing-off")
    }

    @Test("with no worker alive the transfer waits for one; a paused one waits for resume")
    func noWorkerAndPaused() throws {
        let cluster = try Cluster("wait-noworker")
        let id = try cluster.enqueue("http://127.0.0.1:9/x.bin", ["--dest", "x.bin"])
        #expect(try Self.waiting(cluster, id) == "waits: no worker has ever run against this database; start one with 'haul worker --storage DIR'")
        #expect(try cluster.haul(["list"]).stdout.contains("waits: no worker has ever run"))
        let listed = try JSONSerialization.jsonObject(with: Data(try cluster.haul(["list", "--json"]).stdout.utf8)) as? [[String: Any]]
        #expect(listed?.first?["waiting"] as? String == (try Self.waiting(cluster, id)), "list --json says it as status --json does")
        #expect(try Self.reason(cluster, id) == "no-live-worker")
        #expect(listed?.first?["waiting_reason"] as? String == "no-live-worker")
        #expect(try cluster.haul(["pause", String(id)]).status == 0)
        #expect(try Self.waiting(cluster, id) == "waits: it is paused; 'haul resume \(id)' lets it run")
        #expect(try Self.reason(cluster, id) == "paused")
        let text = try cluster.haul(["status", String(id)]).stdout
        #expect(text.contains("waiting:   it is paused; 'haul resume \(id)' lets it run"), "\(text)")
        #expect(try cluster.haul(["resume", String(id)]).status == 0)
        #expect(try Self.reason(cluster, id) == "no-live-worker", "a transfer running again waits for a worker, not for resume")
    }
}
