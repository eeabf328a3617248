import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import Testing

/// What the statements of a lane with nothing to do cost the database. While a batch of
/// thousands of small files runs, every slot given back wakes idle lanes, and each asks for a
/// batch to plan: a claim that finds every host full must read next to nothing. HaulQueue's own
/// statements against the real database, read back from `pg_prepared_statements`.
@Suite("idle claims read next to nothing")
struct IdleClaimTests {
    /// The executed plan of the prepared statements whose text contains every one of `fragments`,
    /// each run with `arguments` (in a transaction, with its generic plan).
    private func executedPlans(_ conn: PostgresConnection, containing fragments: [String], arguments: String) throws -> [String] {
        let filter = fragments.map { "statement LIKE '%\($0.replacingOccurrences(of: "'", with: "''"))%'" }.joined(separator: " AND ")
        let names = try conn.query("SELECT name FROM pg_prepared_statements WHERE \(filter)").rows.map { try $0.string("name") }
        return try names.map { name in
            try conn.transaction {
                _ = try conn.query("SET LOCAL plan_cache_mode = force_generic_plan")
                return try conn.query("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE \(name)(\(arguments))").rows
                    .compactMap { $0["QUERY PLAN"] }.joined(separator: "\n")
            }
        }
    }

    @Test("a planning claim while every host is at its limit reads no pending transfer")
    func fullHostIsNotSearched() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let host = "full.test"
        try HostLimits.set(conn, host: host, limit: 2)
        _ = try Batches(conn).enqueue((0..<800).map { NewTransfer(url: "http://\(host)/f-\($0)", dest: "f-\($0)") }, batch: "full")
        let leases = TransferLeases(conn, workerID: "worker-a")
        #expect(try leases.claimPlanning(lease: 30, limit: 100, connections: 2).claims.count == 100)
        #expect(try database.scalar("SELECT busy FROM origin_hosts WHERE host = '\(host)'") == "2")
        // The host is full: both tries (skipping a locked host row, then waiting for it) find nothing.
        #expect(try leases.claimPlanning(lease: 30, limit: 100, connections: 2).claims.isEmpty)
        let plans = try executedPlans(conn, containing: ["candidate", "SET state = 'planning'"], arguments: "30, 'worker-a', 2, 8")
        #expect(plans.count == 2, "the claim's two tries")
        for plan in plans {
            let pendingScan = plan.split(separator: "\n").filter { $0.contains("transfers_pending") }
            #expect(!pendingScan.isEmpty, "\(plan)")
            #expect(pendingScan.allSatisfy { $0.contains("never executed") }, "\(plan)")
        }
        // With a slot free again the same statement finds the host's next transfers.
        try HostLimits.set(conn, host: host, limit: 4)
        #expect(try leases.claimPlanning(lease: 30, limit: 100, connections: 2).claims.count == 100)
    }
}
