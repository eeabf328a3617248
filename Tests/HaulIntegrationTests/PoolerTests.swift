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

        /// How many server sessions the pool may open.
        let poolSize: Int

        init(database: String, poolSize: Int = 20) throws {
            self.poolSize = poolSize
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
                default_pool_size = \(poolSize)
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

        /// A count (`sql` selects it as `n`) on each server session of the pool: as many
        /// clients as the pool has sessions each open a transaction, so each is lent its own.
        func countOnEverySession(_ sql: String) throws -> [Int] {
            let clients = try (0..<poolSize).map { _ in try PostgresConnection(conninfo: url) }
            for client in clients { try client.query("BEGIN") }
            defer { for client in clients { _ = try? client.query("COMMIT") } }
            return try clients.map { try $0.query(sql).first?.int("n") ?? -1 }
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

    @Test(
        "a transfer completes with every worker connection going through PgBouncer in transaction mode; no pooled session is left listening or holding a prepared statement",
        arguments: [["--poll-only"], []])
    func transactionMode(flags: [String]) throws {
        let cluster = try Cluster("bouncer")
        let bouncer = try Bouncer(database: cluster.database.name, poolSize: 4)
        let file = try Origin.file("pooler/file.bin", size: 6 * 1_048_576 + 3)
        let enqueue = try Run.haul(
            ["enqueue", Harness.origin + "/slow" + file.path, "--dest", "b.bin", "--segment-size", "1MiB", "--json"], database: bouncer.url)
        #expect(enqueue.status == 0, "\(enqueue.stderr)")
        let worker = try Child(
            Harness.haulBinary, ["worker", "--storage", cluster.storage, "--poll-interval", "200ms", "--concurrency", "3"] + flags,
            environment: ["DATABASE_URL": bouncer.url])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 15)
        }
        #expect(try Harness.waitUntil(timeout: 60) { try cluster.database.scalar("SELECT state FROM transfers") == "done" }, "\(worker.stderr)")
        #expect(cluster.sha256("b.bin") == file.sha256)
        #expect(!worker.stderr.contains("ERROR"), "\(worker.stderr)")
        // A LISTEN or a named statement left on a server session would be met by the pool's
        // other clients ("prepared statement already exists" in PostgreSQL's log).
        #expect(try bouncer.countOnEverySession("SELECT count(*) AS n FROM pg_listening_channels()") == [0, 0, 0, 0])
        #expect(try bouncer.countOnEverySession("SELECT count(*) AS n FROM pg_prepared_statements") == [0, 0, 0, 0])
    }

    @Test("behind PgBouncer in transaction mode nothing is prepared from the first statement; a direct connection still prepares")
    func unpreparedBehindThePooler() throws {
        let database = try TestDatabase(migrated: false)
        _ = try database.scalar("CREATE TABLE hits (n int)")
        let bouncer = try Bouncer(database: database.name, poolSize: 2)
        let insert = PipelinedStatement("INSERT INTO hits VALUES ($1) RETURNING n + 1 AS next", [41], awaitDurableCommit: false, prepared: true)
        let clients = try (0..<3).map { _ in try PostgresConnection(conninfo: bouncer.url) }
        #expect(clients.map(\.throughPooler) == [true, true, true])
        for client in clients {
            for _ in 0..<3 { #expect(try client.pipelined([insert, insert]).map { try $0.first?.int("next") } == [42, 42]) }
        }
        #expect(try database.scalar("SELECT count(*) FROM hits") == "18")
        // A named statement on a pooled session is what makes another client's first Parse of
        // that name fail with "prepared statement already exists", which PostgreSQL logs.
        #expect(try bouncer.countOnEverySession("SELECT count(*) AS n FROM pg_prepared_statements") == [0, 0])

        let direct = try PostgresConnection(conninfo: database.url)
        #expect(!direct.throughPooler)
        _ = try direct.pipelined([insert])
        #expect(try direct.query("SELECT count(*) AS n FROM pg_prepared_statements").first?.int("n") == 1, "prepared where no pooler is in between")
    }

    @Test("a HAUL_PREPARED_STATEMENTS other than auto, always or never is refused in one line, exit 2")
    func wrongPolicyIsRefused() throws {
        let database = try TestDatabase()
        let refused = try Run.haul(["list"], database: database.url, environment: ["HAUL_PREPARED_STATEMENTS": "sometimes"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("HAUL_PREPARED_STATEMENTS 'sometimes' is not one of auto, always, never"), "\(refused.stderr)")
        #expect(try Run.haul(["list"], database: database.url, environment: ["HAUL_PREPARED_STATEMENTS": "always"]).status == 0)
    }

    @Test("haul wait through PgBouncer polls: no pooled server session is left listening")
    func waitListensOnNoPooledSession() throws {
        let cluster = try Cluster("bouncer-wait")
        let bouncer = try Bouncer(database: cluster.database.name, poolSize: 2)
        let file = try Origin.file("pooler/wait.bin", size: 1_048_576)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "w.bin"])
        let wait = try Child(Harness.haulBinary, ["wait", String(id), "--timeout", "90s"], environment: ["DATABASE_URL": bouncer.url])
        defer {
            wait.signal(SIGTERM)
            _ = wait.wait(timeout: 5)
        }
        // No worker yet: wait has reported and is waiting.
        #expect(Harness.waitUntil(timeout: 30) { wait.stderr.contains("0/1 done") }, "\(wait.stderr)")
        #expect(try bouncer.countOnEverySession("SELECT count(*) AS n FROM pg_listening_channels()") == [0, 0])
        try cluster.startWorker()
        #expect(wait.wait(timeout: 60))
        #expect(wait.exitStatus == 0, "\(wait.stderr)")
        #expect(try bouncer.countOnEverySession("SELECT count(*) AS n FROM pg_listening_channels()") == [0, 0])
    }

    @Test("with HAUL_PREPARED_STATEMENTS=always, a prepared statement that reaches another server session through PgBouncer runs once, unprepared")
    func preparedStatementsAcrossSessions() throws {
        let database = try TestDatabase(migrated: false)
        _ = try database.scalar("CREATE TABLE hits (n int)")
        let bouncer = try Bouncer(database: database.name)
        // Told the pooler keeps prepared statements (it does not): the first mismatch turns them off.
        let first = try PostgresConnection(conninfo: bouncer.url, preparedStatements: .always)
        let second = try PostgresConnection(conninfo: bouncer.url, preparedStatements: .always)
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
