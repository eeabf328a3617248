import Foundation
import HaulPostgres
import HaulQueue
import Testing

@testable import HaulWorker

/// Rounds of maintenance services against a real PostgreSQL (`HAUL_TEST_DATABASE_URL`; bin/test
/// runs this suite with the services).
@Suite("maintenance services on PostgreSQL")
struct MaintenanceDatabaseTests {
    @Test("one round of the pruner deletes the finished transfers older than the retention and keeps the rest")
    func pruneOnce() throws {
        guard let server = ProcessInfo.processInfo.environment["HAUL_TEST_DATABASE_URL"] else {
            Issue.record("HAUL_TEST_DATABASE_URL is not set: source /tmp/haul-dev/env")
            return
        }
        let name = "haul_t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresConnection(conninfo: server).query("CREATE DATABASE \(name)")
        let url = String(server[..<server.range(of: "/", options: .backwards)!.upperBound]) + name
        let conn = try PostgresConnection(conninfo: url)
        _ = try Migrations.apply(on: conn)
        try conn.query(
            """
            INSERT INTO transfers (url, host, segment_size, state, finished_at) VALUES
                ('http://o/old', 'o', 1, 'done', now() - interval '2 days'),
                ('http://o/new', 'o', 1, 'done', now() - interval '1 hour'),
                ('http://o/open', 'o', 1, 'downloading', NULL)
            """)
        let database = ResilientConnection(link: DatabaseLink(conninfo: url), stopping: { false })
        let pruner = try #require(RetentionPruner(config: RetentionPruner.Config(environment: ["HAUL_RETENTION": "1d"]), database: database))
        #expect(!pruner.runsAtStart && pruner.interval > 0)
        try pruner.runOnce()
        let left = try conn.query("SELECT url FROM transfers ORDER BY url").rows.map { try $0.string("url") }
        #expect(left == ["http://o/new", "http://o/open"])
    }
}
