import Foundation
import HaulPostgres
import HaulTestSupport
import Testing

/// Workers behind PgBouncer in transaction mode (`--poll-only`): no session state is relied on.
@Suite("pgbouncer")
struct PoolerTests {
    /// A PgBouncer in transaction mode in front of the test server, run as `postgres` (it refuses root).
    final class Bouncer {
        let url: String
        let child: Child
        let directory: String

        init(database: String) throws {
            directory = Harness.temporaryDirectory("pgbouncer")
            chmod(directory, 0o777)
            // A port nobody listens on: a random one was sometimes taken, and psql then reached
            // whatever held it.
            let port = Reliability.freePort()
            let server = URL(string: Harness.databaseServer)!
            let config = """
                [databases]
                * = host=\(server.host!) port=\(server.port!)
                [pgbouncer]
                listen_addr = 127.0.0.1
                listen_port = \(port)
                auth_type = trust
                auth_file = \(directory)/users.txt
                pool_mode = transaction
                max_client_conn = 200
                default_pool_size = 20
                logfile = \(directory)/pgbouncer.log
                pidfile = \(directory)/pgbouncer.pid
                """
            try config.write(toFile: directory + "/pgbouncer.ini", atomically: true, encoding: .utf8)
            try "\"postgres\" \"\"\n".write(toFile: directory + "/users.txt", atomically: true, encoding: .utf8)
            child = try Child("/usr/sbin/runuser", ["-u", "postgres", "--", "/usr/sbin/pgbouncer", directory + "/pgbouncer.ini"], environment: [:])
            url = "postgresql://postgres@127.0.0.1:\(port)/\(database)"
            let up = try Harness.waitUntil(timeout: 10) { try Run.psql(url, "SELECT 1").status == 0 }
            if !up { throw TestFailure("pgbouncer did not start: \(child.stderr)") }
        }

        /// Stops PgBouncer itself: `runuser` does not pass a signal on to it, and a PgBouncer
        /// left running outlives the test run.
        deinit {
            let pid = (try? String(contentsOfFile: directory + "/pgbouncer.pid", encoding: .utf8)).flatMap {
                pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if let pid {
                kill(pid, SIGINT)
                if !Harness.waitUntil(timeout: 5, { kill(pid, 0) != 0 }) { kill(pid, SIGKILL) }
            }
            child.signal(SIGINT)
            _ = child.wait(timeout: 5)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test("a transfer completes with every worker connection going through PgBouncer in transaction mode")
    func transactionMode() throws {
        let cluster = try Cluster("bouncer")
        let bouncer = try Bouncer(database: cluster.database.name)
        let file = try Origin.file("pooler/file.bin", size: 6 * 1_048_576 + 3)
        let enqueue = try Run.haul(
            ["enqueue", Harness.origin + "/slow" + file.path, "--dest", "b.bin", "--segment-size", "1MiB", "--json"], database: bouncer.url)
        #expect(enqueue.status == 0, "\(enqueue.stderr)")
        let worker = try Child(
            Harness.haulBinary, ["worker", "--storage", cluster.storage, "--poll-only", "--poll-interval", "200ms", "--concurrency", "3"],
            environment: ["DATABASE_URL": bouncer.url])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 15)
        }
        #expect(try Harness.waitUntil(timeout: 60) { try cluster.database.scalar("SELECT state FROM transfers") == "done" }, "\(worker.stderr)")
        #expect(cluster.sha256("b.bin") == file.sha256)
        #expect(!worker.stderr.contains("ERROR"), "\(worker.stderr)")
    }

    @Test("a prepared statement that reaches another server session through PgBouncer runs once, unprepared")
    func preparedStatementsAcrossSessions() throws {
        let database = try TestDatabase(migrated: false)
        _ = try database.scalar("CREATE TABLE hits (n int)")
        let bouncer = try Bouncer(database: database.name)
        let first = try PostgresConnection(conninfo: bouncer.url)
        let second = try PostgresConnection(conninfo: bouncer.url)
        let insert = PipelinedStatement("INSERT INTO hits VALUES ($1) RETURNING n + 1 AS next", [41], awaitDurableCommit: false, prepared: true)
        // Prepared on the pool's first server session.
        #expect(try first.pipelined([insert])[0].first?.int("next") == 42)
        try second.transaction {
            // second holds that session until it commits: first's runs reach a new one, which
            // lacks the statement (26000); second's own first run may reach first's old session,
            // which has its name already (42P05) once second commits.
            _ = try second.query("SELECT 1")
            let results = try first.pipelined([insert, insert])
            #expect(try results.map { try $0.first?.int("next") } == [42, 42])
        }
        #expect(try second.pipelined([insert])[0].first?.int("next") == 42)
        #expect(try first.pipelined([insert])[0].first?.int("next") == 42)
        #expect(try database.scalar("SELECT count(*) FROM hits") == "5")
    }
}
