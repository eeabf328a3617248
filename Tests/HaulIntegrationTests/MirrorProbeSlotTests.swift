import Foundation
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Testing

extension MirrorTests {
    @Test("a probe that goes on to the next mirror takes a slot of its host: at its limit, the transfer waits, then fetches")
    func probeOnNextMirrorHoldsItsHostsSlot() throws {
        let file = try Origin.file("mirrors/probe-slot-\(UUID().uuidString.prefix(6)).bin", size: 300_000)
        // The second mirror is the origin seen through a proxy that counts the connections to it.
        let proxy = try CountingProxy(targetPort: try #require(URLComponents(string: Harness.origin)?.port))
        defer { proxy.stop() }
        let mirrorHost = "127.0.0.1:\(proxy.port)"
        let database = try TestDatabase()
        let db = try PostgresConnection(conninfo: database.url)
        try HostLimits.set(db, host: mirrorHost, limit: 1)
        // Another transfer's probe holds the mirror host's one slot.
        let holder = try TransferStore(db).enqueue(NewTransfer(url: proxy.url + "/holder.bin", dest: "holder.bin", segmentSize: 4 << 20))
        try db.query(
            "UPDATE transfers SET state = 'planning', holds_slot = true, lease_token = gen_random_uuid(), lease_expires_at = now() + interval '1 hour' WHERE id = $1",
            [holder])
        try #require(try database.scalar("SELECT busy FROM origin_hosts WHERE host = '\(mirrorHost)'") == "1")

        let work = Harness.temporaryDirectory("probe-slot")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let get = try Child(
            Harness.haulBinary,
            ["get", "http://127.0.0.1:9/dead.bin", "--mirror", proxy.url + file.path, "-o", work + "/out/f.bin", "--segment-size", "256KiB"],
            environment: ["DATABASE_URL": database.url])
        // The first mirror failed its probe and the transfer was handed back to wait (or, as before
        // the fix, the probe went on to the full mirror's host at once).
        let waited = try Harness.waitUntil(timeout: 60) {
            guard get.isRunning, proxy.connections == 0 else { return true }
            return try database.scalar(
                """
                SELECT count(*) FROM transfers t JOIN transfer_mirrors m ON m.transfer_id = t.id AND m.idx = 0
                WHERE t.url = 'http://127.0.0.1:9/dead.bin' AND m.failures >= 1 AND t.state = 'pending' AND t.lease_token IS NULL
                """) == "1"
        }
        try #require(waited, "the get neither waited nor went on: \(get.stderr)")
        #expect(proxy.connections == 0, "the probe opened a connection to a mirror host at its limit: \(get.stderr)")
        #expect(get.isRunning, "the get did not wait for the mirror host's slot: \(get.stderr)")

        // The slot is given back: the waiting transfer probes the mirror and fetches the file.
        try db.query("DELETE FROM transfers WHERE id = $1", [holder])
        try #require(get.wait(timeout: 120), "the get did not finish: \(get.stderr)")
        #expect(get.exitStatus == 0, "\(get.stderr)")
        #expect(Origin.sha256(file: work + "/out/f.bin") == file.sha256)
        #expect(proxy.connections >= 1)
        // No slot is left behind on either host.
        #expect(try database.scalar("SELECT coalesce(sum(busy), 0) FROM origin_hosts") == "0")
    }
}

extension MirrorTests {
    @Test("a Metalink whose size no mirror serves is refused with the reason, each mirror demoted, nothing written")
    func metalinkSizeNoMirrorServes() throws {
        let file = try Origin.file("mirrors/size-\(UUID().uuidString.prefix(6)).bin", size: 100_000)
        let metalink = """
            <?xml version="1.0" encoding="UTF-8"?>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink">
              <file name="sized.bin">
                <size>100001</size>
                <url priority="1">\(Harness.origin + file.path)</url>
                <url priority="2">\(Harness.origin + file.path)?again</url>
              </file>
            </metalink>
            """
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("metalink-size")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try metalink.write(toFile: work + "/file.meta4", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: work + "/out", withIntermediateDirectories: true)
        let result = try Run.haul(["get", "--metalink", work + "/file.meta4", "-o", work + "/out/"], database: database.url, directory: work)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("serves 100000 bytes, but the Metalink says 100001"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work + "/out").isEmpty)
        let rows = try Self.mirrorRows(database)
        #expect(rows.count == 2 && rows.allSatisfy { $0.hasPrefix("demoted ") && $0.contains("the Metalink says 100001") }, "\(rows)")
    }
}
