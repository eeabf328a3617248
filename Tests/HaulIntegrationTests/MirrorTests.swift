import Foundation
import HaulTestSupport
import Testing

/// One file from several mirrors (a Metalink, `--mirror`): a corrupt mirror's bad piece is
/// fetched again elsewhere, a dead one hands its segments on, the file is exact.
@Suite("mirrors and Metalink")
struct MirrorTests {
    static let piece = 256 * 1024

    /// A file of 2 MiB + 5 bytes on the test origin, a copy of it with one byte of pieces 0 (the
    /// probe's own segment) and 3 changed, and a Metalink listing the corrupt copy first, then a dead mirror (nothing
    /// listens on port 9), then the good file, with the file's piece and whole-file digests.
    static func mirrored(_ label: String) throws -> (good: (path: String, sha256: String), corrupt: String, metalink: String) {
        let name = "mirrors/\(label)-\(UUID().uuidString.prefix(6)).bin"
        let good = try Origin.file(name, size: 2 * 1_048_576 + 5)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: Harness.docroot + good.path))
        for offset in [100, 3 * piece + 100] { bytes[offset] ^= 0xFF }
        let corrupt = "/" + name + ".corrupt"
        try bytes.write(to: URL(fileURLWithPath: Harness.docroot + corrupt))
        for offset in [100, 3 * piece + 100] { bytes[offset] ^= 0xFF }
        let hashes = stride(from: 0, to: bytes.count, by: piece).map { start in
            "<hash>\(Origin.sha256(bytes.subdata(in: start..<min(start + piece, bytes.count))))</hash>"
        }
        let metalink = """
            <?xml version="1.0" encoding="UTF-8"?>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink">
              <file name="\(label).bin">
                <size>\(bytes.count)</size>
                <hash type="sha-256">\(good.sha256)</hash>
                <pieces length="\(piece)" type="sha-256">\(hashes.joined())</pieces>
                <url priority="1">\(Harness.origin + corrupt)</url>
                <url priority="2">http://127.0.0.1:9/\(label).bin</url>
                <url priority="3">\(Harness.origin + good.path)</url>
              </file>
            </metalink>
            """
        return (good, corrupt, metalink)
    }

    /// Each mirror's state, failures and bytes, by priority: `state failures bytes reason`.
    static func mirrorRows(_ database: TestDatabase) throws -> [String] {
        try database.scalar("SELECT string_agg(concat_ws(' ', state, failures, bytes, reason), E'\\n' ORDER BY idx) FROM transfer_mirrors")
            .split(separator: "\n").map(String.init)
    }

    @Test("haul get --metalink: a corrupt, a dead and a good mirror give the exact file; the bad piece is fetched elsewhere")
    func getMetalink() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("metalink-get")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (good, _, metalink) = try Self.mirrored("get")
        try metalink.write(toFile: work + "/file.meta4", atomically: true, encoding: .utf8)
        let result = try Run.haul(
            ["get", "--metalink", work + "/file.meta4", "-o", work + "/out/", "--segment-size", "256KiB"], database: database.url, directory: work,
            timeout: 180)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: work + "/out/get.bin") == good.sha256)
        let rows = try Self.mirrorRows(database)
        #expect(rows.count == 3)
        // The corrupt mirror is demoted for a bad piece, the dead one failed, the good one brought bytes.
        #expect(rows.first?.hasPrefix("demoted") == true && rows.first?.contains("wrong sha256 digest") == true, "\(rows)")
        #expect(rows.dropFirst().first.map { $0.split(separator: " ")[1] != "0" } == true, "\(rows)")
        #expect(rows.last.map { Int($0.split(separator: " ")[2]) ?? 0 > 0 } == true, "\(rows)")
    }

    @Test("haul enqueue --metalink URL with two workers: the exact file, the corrupt mirror demoted")
    func enqueueMetalink() throws {
        let cluster = try Cluster("metalink-fleet")
        let (good, _, metalink) = try Self.mirrored("fleet")
        // Given as a URL: the command fetches the Metalink itself.
        let document = "/mirrors/fleet-\(UUID().uuidString.prefix(6)).meta4"
        try metalink.write(toFile: Harness.docroot + document, atomically: true, encoding: .utf8)
        let result = try cluster.haul(["enqueue", "--metalink", Harness.origin + document, "--dest", "isos/", "--segment-size", "256KiB"])
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(Int64(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let ports = [Reliability.freePort(), Reliability.freePort()]
        for port in ports { try cluster.startWorker(["--metrics-addr", "127.0.0.1:\(port)"]) }
        #expect(try cluster.waitFinal([id], timeout: 120) == ["done"])
        #expect(Origin.sha256(file: cluster.storage + "/isos/fleet.bin") == good.sha256)
        #expect(try Self.mirrorRows(cluster.database).first?.hasPrefix("demoted") == true)
        // The workers' metrics count the demotion.
        let scraped = try ports.map { try Run.program("/usr/bin/curl", ["-s", "http://127.0.0.1:\($0)/metrics"], environment: [:], timeout: 30).stdout }
        #expect(scraped.joined().contains("haul_mirror_failures_total{demoted=\"true\"}"), "\(scraped)")
    }

    @Test("haul get URL --mirror URL2 --mirror URL3: the agreeing mirrors serve segments, one of another size is demoted")
    func getWithMirror() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("mirror-get")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("mirrors/plain-\(UUID().uuidString.prefix(6)).bin", size: 2 * 1_048_576)
        let copy = file.path + ".copy"
        try FileManager.default.copyItem(atPath: Harness.docroot + file.path, toPath: Harness.docroot + copy)
        let other = try Origin.file("mirrors/other-\(UUID().uuidString.prefix(6)).bin", size: 2 * 1_048_576 + 1)
        let result = try Run.haul(
            [
                "get", Harness.origin + file.path, "--mirror", Harness.origin + copy, "--mirror", Harness.origin + other.path, "-o", work + "/plain.bin",
                "--segment-size", "256KiB",
            ],
            database: database.url, directory: work)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: work + "/plain.bin") == file.sha256)
        let rows = try Self.mirrorRows(database)
        #expect(rows.count == 3)
        #expect(rows.prefix(2).allSatisfy { $0.hasPrefix("healthy") && Int($0.split(separator: " ")[2]) ?? 0 > 0 }, "\(rows)")
        #expect(rows.last?.hasPrefix("demoted") == true && rows.last?.contains("another version") == true, "\(rows)")
    }

    @Test("a hostile Metalink is refused with one line and exit 2, nothing written")
    func hostile() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("metalink-hostile")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let documents = [
            "<metalink><file name=\"../../escape.bin\"><url>\(Harness.origin)/x</url></file></metalink>",
            "<!DOCTYPE m [<!ENTITY a \"aaaa\">]><metalink><file name=\"a.bin\"><url>\(Harness.origin)/&a;</url></file></metalink>",
            "<metalink><file name=\"a.bin\"><size>10</size><pieces length=\"1\" type=\"sha-1\"><hash>\(String(repeating: "0", count: 40))</hash></pieces>"
                + "<url>\(Harness.origin)/x</url></file></metalink>",
        ]
        try FileManager.default.createDirectory(atPath: work + "/out", withIntermediateDirectories: true)
        for (index, document) in documents.enumerated() {
            try document.write(toFile: work + "/\(index).meta4", atomically: true, encoding: .utf8)
            let result = try Run.haul(["get", "--metalink", work + "/\(index).meta4", "-o", work + "/out/"], database: database.url, directory: work)
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("Metalink"), "\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: work + "/out").isEmpty)
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "0")
    }
}

extension MirrorTests {
    @Test("a manifest line with tab-separated URLs is one transfer fetched from all of them; status shows each mirror")
    func manifestMirrors() throws {
        let cluster = try Cluster("manifest-mirrors")
        let file = try Origin.file("mirrors/listed-\(UUID().uuidString.prefix(6)).bin", size: 2 * 1_048_576)
        let copy = file.path + ".copy"
        try FileManager.default.copyItem(atPath: Harness.docroot + file.path, toPath: Harness.docroot + copy)
        let manifest = cluster.storage + "-manifest.txt"
        try "\(Harness.origin + file.path)\t\(Harness.origin + copy)\tout/listed.bin\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: manifest) }
        let result = try cluster.haul(["enqueue", "--manifest", manifest, "--batch", "mirrored", "--segment-size", "256KiB"])
        #expect(result.status == 0, "\(result.stderr)")
        let id = try #require(Int64(try cluster.database.scalar("SELECT id FROM transfers")))
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id], timeout: 120) == ["done"])
        #expect(Origin.sha256(file: cluster.storage + "/out/listed.bin") == file.sha256)
        let mirrors = try #require(try cluster.status(id)["mirrors"] as? [[String: Any]])
        #expect(mirrors.count == 2)
        #expect(mirrors.allSatisfy { $0["state"] as? String == "healthy" && ($0["bytes"] as? Int ?? 0) > 0 }, "\(mirrors)")
        let text = try cluster.haul(["status", String(id)]).stdout
        #expect(text.contains("mirror 1: healthy"), "\(text)")
    }
}

extension MirrorTests {
    @Test("the dashboard's transfer page and status list each mirror, when a resting one is retried, its reason escaped and its secrets hidden")
    func dashboardMirrors() throws {
        let served = try DashboardTests.Served("dash-mirrors")
        let id = try served.cluster.enqueue(
            "http://127.0.0.1:9/a.bin", ["--mirror", "http://user:pw@127.0.0.1:9/b.bin?token=hunter2", "--dest", "a.bin"])
        _ = try Run.psql(
            served.cluster.database.url,
            "UPDATE transfer_mirrors SET state = 'demoted', failures = 3, bytes = 1048576, reason = '<b>piece 3</b>' WHERE transfer_id = \(id) AND idx = 1;"
                + "UPDATE transfer_mirrors SET state = 'resting', failures = 1, retry_after = '2030-01-02 03:04:05+00', reason = '404' WHERE transfer_id = \(id) AND idx = 0"
        )
        _ = try served.logIn()
        let page = try served.request("GET", "/transfers/\(id)").body
        #expect(page.contains("<h2>Mirrors</h2>"))
        #expect(page.contains("demoted") && page.contains("&lt;b&gt;piece 3&lt;/b&gt;") && page.contains("1.0 MiB"), "\(page)")
        // A resting mirror says when it is tried again, on the page and in status.
        #expect(page.contains("resting") && page.contains("2030-01-02 03:04:05 UTC"), "\(page)")
        let text = try served.cluster.haul(["status", String(id)]).stdout
        #expect(text.contains("mirror 0: resting until 2030-01-02 03:04:05 UTC (404)"), "\(text)")
        #expect(!page.contains("hunter2") && !page.contains("pw@"))
    }
}

extension MirrorTests {
    /// `value` for a query of the fault origin's `/_create`.
    static func query(_ value: String) -> String { value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value }

    @Test("RFC 6249: the origin's Link rel=duplicate mirror serves segments, unless --no-mirror-headers; its Digest is checked")
    func mirrorHeaders() throws {
        let origin = try FaultOrigin()
        let work = Harness.temporaryDirectory("mirror-headers")
        defer { try? FileManager.default.removeItem(atPath: work) }
        // The mirror on nginx is a copy of what the fault origin serves (its folder may not exist yet:
        // this test can run before any other has made it).
        let copy = "/mirrors/duplicate-\(UUID().uuidString.prefix(6)).bin"
        let served = try origin.create(
            "/linked.bin", size: 2 * 1_048_576, ["link": Self.query("<\(Harness.origin + copy)>; rel=duplicate; pri=1")])
        try FileManager.default.createDirectory(atPath: Harness.docroot + "/mirrors", withIntermediateDirectories: true)
        let fetched = try Run.program("/usr/bin/curl", ["-sf", "-o", Harness.docroot + copy, served.url], environment: [:], timeout: 60)
        #expect(fetched.status == 0)
        for (flags, mirrors) in [([String](), 2), (["--no-mirror-headers"], 0)] {
            let database = try TestDatabase()
            let result = try Run.haul(
                ["get", served.url, "-o", work + "/linked-\(mirrors).bin", "--segment-size", "256KiB"] + flags, database: database.url,
                directory: work)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Origin.sha256(file: work + "/linked-\(mirrors).bin") == served.sha256)
            let rows = try Self.mirrorRows(database)
            #expect(rows.count == mirrors, "\(rows)")
            #expect(rows.allSatisfy { Int($0.split(separator: " ")[2]) ?? 0 > 0 }, "\(rows)")
        }
        // A Digest the bytes do not have fails the get as a checksum mismatch.
        let wrong = try origin.create("/digested.bin", size: 100_000, ["digest": Self.query("SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")])
        let database = try TestDatabase()
        let result = try Run.haul(["get", wrong.url, "-o", work + "/digested.bin"], database: database.url, directory: work)
        #expect(result.status == 10, "\(result.stderr)")
    }
}

extension MirrorTests {
    @Test("haul get --metalink: a <metaurl> Metalink's mirrors serve segments at its priority; a hostile one is refused")
    func metaurl() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("metalink-metaurl")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let size = 2 * 1_048_576
        let file = try Origin.file("mirrors/meta-\(UUID().uuidString.prefix(6)).bin", size: size)
        let copy = file.path + ".copy"
        try FileManager.default.copyItem(atPath: Harness.docroot + file.path, toPath: Harness.docroot + copy)
        // The nested Metalink, on the origin, names the copy; the outer one the file itself, at a lower priority.
        let nested = file.path + ".meta4"
        try """
        <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="meta.bin"><size>\(size)</size>
        <url>\(Harness.origin + copy)</url></file></metalink>
        """.write(toFile: Harness.docroot + nested, atomically: true, encoding: .utf8)
        let outer = { (metaurl: String) in
            """
            <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="meta.bin"><size>\(size)</size>
            <hash type="sha-256">\(file.sha256)</hash>
            <url priority="2">\(Harness.origin + file.path)</url>
            <metaurl mediatype="metalink" priority="1">\(metaurl)</metaurl>
            <metaurl mediatype="torrent" priority="1">\(Harness.origin)/none.torrent</metaurl>
            </file></metalink>
            """
        }
        try outer(Harness.origin + nested).write(toFile: work + "/file.meta4", atomically: true, encoding: .utf8)
        let result = try Run.haul(
            ["get", "--metalink", work + "/file.meta4", "-o", work + "/out/", "--segment-size", "256KiB"], database: database.url, directory: work)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: work + "/out/meta.bin") == file.sha256)
        // The metaurl's mirror comes first (priority 1), and both served segments.
        let urls = try database.scalar("SELECT string_agg(url, ' ' ORDER BY idx) FROM transfer_mirrors")
        #expect(urls == "\(Harness.origin + copy) \(Harness.origin + file.path)")
        #expect(try Self.mirrorRows(database).allSatisfy { Int($0.split(separator: " ")[2]) ?? 0 > 0 })
        // A metaurl's Metalink with an entity declaration is refused, with one line, nothing recorded.
        let hostile = file.path + ".hostile.meta4"
        try "<!DOCTYPE m [<!ENTITY a \"aaaa\">]><metalink><file name=\"meta.bin\"><url>\(Harness.origin)/&a;</url></file></metalink>".write(
            toFile: Harness.docroot + hostile, atomically: true, encoding: .utf8)
        try outer(Harness.origin + hostile).write(toFile: work + "/hostile.meta4", atomically: true, encoding: .utf8)
        let other = try TestDatabase()
        let refused = try Run.haul(["get", "--metalink", work + "/hostile.meta4", "-o", work + "/refused/"], database: other.url, directory: work)
        #expect(refused.status == 2 && refused.stderr.split(separator: "\n").count == 1 && refused.stderr.contains("<metaurl>"), "\(refused.stderr)")
        #expect(try other.scalar("SELECT count(*) FROM transfers") == "0")
    }

    /// `haul get ARGS -o DIR/dead.bin --segment-size 256KiB` in a folder of its own (a Metalink's
    /// text among `arguments` is written to a file there first): the result and the mirrors' rows.
    static func getDeadFirst(_ arguments: [String], label: String) throws -> (status: Int32, stderr: String, file: String, rows: [String]) {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory(label)
        defer { try? FileManager.default.removeItem(atPath: work) }
        if let metalink = arguments.first(where: { $0.hasPrefix("<?xml") }) {
            try metalink.write(toFile: work + "/file.meta4", atomically: true, encoding: .utf8)
        }
        let given = arguments.map { $0.hasPrefix("<?xml") ? work + "/file.meta4" : $0 }
        let result = try Run.haul(
            ["get"] + given + ["-o", work + "/out/dead.bin", "--segment-size", "256KiB"], database: database.url, directory: work,
            timeout: 120)
        return (result.status, result.stderr, Origin.sha256(file: work + "/out/dead.bin") ?? "", try Self.mirrorRows(database))
    }

    @Test("a dead first mirror (--metalink, --mirror) costs one failed probe: the next mirror answers, the file is exact")
    func deadFirstMirror() throws {
        let file = try Origin.file("mirrors/dead-first-\(UUID().uuidString.prefix(6)).bin", size: 1_048_576 + 3)
        let metalink = """
            <?xml version="1.0" encoding="UTF-8"?>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink">
              <file name="dead.bin">
                <size>\(1_048_576 + 3)</size>
                <hash type="sha-256">\(file.sha256)</hash>
                <url priority="1">http://127.0.0.1:9/dead.bin</url>
                <url priority="2">\(Harness.origin + file.path)</url>
              </file>
            </metalink>
            """
        // Before the probe tried the next mirror, the get retried the dead one until it gave up.
        for (label, arguments) in [
            ("dead-metalink", ["--metalink", metalink]), ("dead-mirror", ["http://127.0.0.1:9/dead.bin", "--mirror", Harness.origin + file.path]),
        ] {
            let got = try Self.getDeadFirst(arguments, label: label)
            #expect(got.status == 0, "\(label): \(got.stderr)")
            #expect(got.file == file.sha256, "\(label)")
            // The dead mirror's failure is counted; the one that answered brought the bytes.
            #expect(got.rows.count == 2, "\(label): \(got.rows)")
            #expect(got.rows.first.map { Int($0.split(separator: " ")[1]) ?? 0 >= 1 } == true, "\(label): \(got.rows)")
            #expect(got.rows.last.map { $0.hasPrefix("healthy") && Int($0.split(separator: " ")[2]) ?? 0 == 1_048_576 + 3 } == true, "\(label): \(got.rows)")
        }
    }

    @Test("small files probed in a batch whose first mirror is dead are fetched from their next mirror")
    func deadFirstMirrorInABatch() throws {
        let cluster = try Cluster("batch-dead-first")
        let files = try (0..<6).map { try Origin.file("mirrors/batch-dead-\(UUID().uuidString.prefix(6))-\($0).bin", size: 20_000 + $0) }
        let manifest = cluster.storage + "-manifest.txt"
        defer { try? FileManager.default.removeItem(atPath: manifest) }
        // Each line: a dead first mirror, then the live one, then the destination (aria2's input-file form).
        try files.enumerated().map { "http://127.0.0.1:9/dead-\($0.offset).bin\t\(Harness.origin + $0.element.path)\tout/\($0.offset).bin" }
            .joined(separator: "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        // No retry: the first probe must reach a live mirror (a retry could find a lane that
        // claims the file alone and probes it on its mirrors anyway).
        #expect(try cluster.haul(["enqueue", "--manifest", manifest, "--batch", "dead-first", "--retry", "0"]).status == 0)
        let ids = try cluster.database.scalar("SELECT string_agg(id::text, ' ' ORDER BY id) FROM transfers").split(separator: " ").compactMap { Int64($0) }
        try #require(ids.count == files.count)
        try cluster.startWorker(["--concurrency", "2"])
        #expect(try cluster.waitFinal(ids, timeout: 120) == Array(repeating: "done", count: files.count))
        for (index, file) in files.enumerated() { #expect(Origin.sha256(file: cluster.storage + "/out/\(index).bin") == file.sha256, "\(index)") }
        // The dead mirror's failures are counted on it, and the live one brought the bytes.
        let dead = try cluster.database.scalar("SELECT count(*) FROM transfer_mirrors WHERE idx = 0 AND failures >= 1")
        #expect(dead == String(files.count))
    }

    @Test("every mirror dead: the get fails with the network exit status 4, each mirror's failure counted")
    func allMirrorsDead() throws {
        let got = try Self.getDeadFirst(["http://127.0.0.1:9/a.bin", "--mirror", "http://127.0.0.1:9/b.bin", "--retry", "0"], label: "dead-all")
        #expect(got.status == 4, "\(got.stderr)")
        #expect(got.stderr.contains("connect"), "\(got.stderr)")
        #expect(got.rows.count == 2 && got.rows.allSatisfy { Int($0.split(separator: " ")[1]) ?? 0 >= 1 }, "\(got.rows)")
    }
}
