import Foundation
import HaulTestSupport
import Testing

/// Workers that fail fast and say where they stand: storage checks at start and in /healthz,
/// database errors that say what is wrong, one ERROR line per failed transfer, JSON logs.
@Suite("worker start and failures")
struct WorkerStartTests {
    static func healthz(_ port: Int) throws -> (code: String, body: String) {
        let result = try Run.program("/usr/bin/curl", ["-s", "-w", "\n%{http_code}", "http://127.0.0.1:\(port)/healthz"], environment: [:])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
    }

    @Test("a missing storage root is refused (exit 2, one line, nothing created) unless --create-storage; start is logged with storage, database and roles")
    func missingStorage() throws {
        let cluster = try Cluster("nostorage")
        try FileManager.default.removeItem(atPath: cluster.storage)
        let refused = try cluster.haul(["worker", "--storage", cluster.storage])
        #expect(refused.status == 2 && refused.stderr.hasPrefix("haul: ") && refused.stderr.contains("does not exist"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--create-storage") && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage), "no silent creation")

        let port = Reliability.freePort()
        let worker = try cluster.startWorker(["--create-storage", "--metrics-addr", "127.0.0.1:\(port)", "--roles", "fetcher,rescuer"])
        try #require(Harness.waitUntil(timeout: 30) { worker.stderr.contains("worker started") }, "\(worker.stderr)")
        let started = worker.stderr.split(separator: "\n").first { $0.contains("worker started") }.map(String.init) ?? ""
        let resolved = URL(fileURLWithPath: cluster.storage).resolvingSymlinksInPath().path
        #expect(started.contains("storage=\(resolved)") && started.contains("roles=fetcher,rescuer"), "\(started)")
        #expect(started.contains("database=127.0.0.1:") && started.contains(cluster.database.name), "\(started)")
        #expect(FileManager.default.fileExists(atPath: cluster.storage))

        // /healthz follows the storage: a vanished mount (the root renamed away) is unhealthy.
        try #require(Harness.waitUntil(timeout: 20) { try Self.healthz(port).code == "200" })
        try FileManager.default.moveItem(atPath: cluster.storage, toPath: cluster.storage + ".gone")
        let sick = try Self.healthz(port)
        #expect(sick.code == "503" && sick.body.contains("not writable"), "\(sick)")
        try FileManager.default.moveItem(atPath: cluster.storage + ".gone", toPath: cluster.storage)
        #expect(try Self.healthz(port).code == "200")
    }

    @Test("a storage root this user cannot write is refused with exit status 2")
    func unwritableStorage() throws {
        let cluster = try Cluster("rostorage")
        // /proc exists but takes no new files, even for root (tests may run as root, which chmod does not stop).
        let result = try cluster.haul(["worker", "--storage", "/proc"])
        #expect(result.status == 2 && result.stderr.contains("not writable") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    @Test("database errors say what is wrong: a refused login, a malformed URL, a missing database, PG* variables")
    func databaseErrors() throws {
        let server = Harness.databaseServer
        let components = URLComponents(string: server)!
        let hostPort = "\(components.host!):\(components.port!)"
        let login = try Run.haul(["list"], database: "postgresql://no_such_haul_user@\(hostPort)/postgres")
        #expect(login.status == 1 && login.stderr.contains("refused the login") && login.stderr.contains("no_such_haul_user"), "\(login.stderr)")
        #expect(!login.stderr.contains("cannot reach"), "\(login.stderr)")
        let malformed = try Run.haul(["list"], database: "postgresql://haul@db:notaport/haul")
        #expect(malformed.status == 1 && malformed.stderr.contains("DATABASE_URL is malformed"), "\(malformed.stderr)")
        let missing = try Run.haul(["list"], database: "postgresql://\(components.user ?? "postgres")@\(hostPort)/no_such_haul_db")
        #expect(missing.status == 1 && missing.stderr.contains("no such database") && missing.stderr.contains("no_such_haul_db"), "\(missing.stderr)")
        let variables = try Run.haul(["list"], database: "", environment: ["PGHOST": "127.0.0.1", "PGPORT": "1"])
        #expect(variables.status == 1 && variables.stderr.contains("PG* variables (PGHOST, PGPORT)"), "\(variables.stderr)")
    }

    @Test("a failed transfer logs one ERROR line with its reason; --log-format json has numbers and RFC 3339 times")
    func failureLine() throws {
        let cluster = try Cluster("errorline")
        let id = try cluster.enqueue(Harness.origin + "/no-such-file-\(UUID().uuidString.prefix(6)).bin", ["--dest", "x.bin"])
        let worker = try cluster.startWorker(["--log-format", "json"])
        #expect(try cluster.waitFinal([id]) == ["failed"])
        try #require(Harness.waitUntil(timeout: 10) { worker.stderr.contains("\"level\":\"error\"") })
        let lines = worker.stderr.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let errors = lines.filter { $0["level"] as? String == "error" }
        #expect(errors.count == 1, "\(errors)")
        let line = try #require(errors.first)
        #expect((line["transfer"] as? NSNumber)?.int64Value == id && !(line["transfer"] is String), "a number: \(line)")
        #expect((line["error"] as? String ?? "").contains("404"), "\(line)")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(lines.allSatisfy { formatter.date(from: $0["time"] as? String ?? "") != nil }, "RFC 3339 times")
        let started = lines.first { $0["msg"] as? String == "worker started" }
        #expect(started?["concurrency"] is NSNumber && started?["storage"] is String, "\(String(describing: started))")
    }
}
