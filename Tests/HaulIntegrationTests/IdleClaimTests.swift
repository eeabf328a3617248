import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import Synchronization
import Testing

/// What the claims of the lanes cost the database around a big batch. Every slot given back
/// wakes idle lanes, and each asks for a batch to plan: a claim that finds every host full must
/// read next to nothing, and the claims that follow a big enqueue must read the pending index,
/// not sort the table. HaulQueue's own statements against the real database, read back from
/// `pg_prepared_statements`.
@Suite("claims read only what they need")
struct IdleClaimTests {
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
        // The host is full: the claim finds nothing, and no other claimer held the host's row.
        let full = try leases.claimPlanning(lease: 30, limit: 100, connections: 2)
        #expect(full.claims.isEmpty && !full.hostContended)
        let plans = try ClaimPlans.statements(conn).filter(ClaimPlans.takesSlots).map {
            try ClaimPlans.plan(conn, $0, host: host, connections: 2, analyze: true)
        }
        #expect(plans.count == 1, "the claim's one statement")
        for plan in plans {
            // The pending rows are read through their own index or the one of all unfinished rows
            // (migration 0030), whichever the plan takes: not at all while the host is full.
            let pendingScan = plan.split(separator: "\n").filter { $0.contains("transfers_pending") || $0.contains("transfers_unfinished") }
            #expect(!pendingScan.isEmpty, "\(plan)")
            #expect(pendingScan.allSatisfy { $0.contains("never executed") }, "\(plan)")
        }
        // With a slot free again the same statement finds the host's next transfers.
        try HostLimits.set(conn, host: host, limit: 4)
        #expect(try leases.claimPlanning(lease: 30, limit: 100, connections: 2).claims.count == 100)
    }

    @Test("a big enqueue commits its rows with their statistics: the claims' plans made on an empty table are replaced at once")
    func statisticsArriveWithTheRows() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let host = "stats.test"
        try HostLimits.set(conn, host: host, limit: 64)
        _ = try conn.query("VACUUM ANALYZE transfers")
        let leases = TransferLeases(conn, workerID: "worker-a")
        // A worker's first claims, on the empty table: the connection's plans are made now.
        #expect(try leases.claimPlanning(lease: 30, limit: 100, connections: 4).claims.isEmpty)
        // The statistics as the workers find them when the enqueue's notice wakes them. (Were
        // they written after the commit, this read would mostly come before them: one round trip
        // after the notice, against the enqueue's next three and the sampling. It did in two
        // runs of three against the code that analyzed after committing.)
        let listener = try PostgresConnection(conninfo: database.url)
        try listener.listen("haul_work")
        let enqueued = Mutex<Result<Int64?, any Error>?>(nil)
        let url = database.url
        Thread {
            let entries = (0..<2000).map { NewTransfer(url: "http://\(host)/f-\($0)", dest: "f-\($0)") }
            let result = Result { try Batches(try PostgresConnection(conninfo: url)).enqueue(entries, batch: "stats").batchID }
            enqueued.withLock { $0 = result }
        }.start()
        #expect(try listener.waitForNotifications(timeout: 30).contains("haul_work"))
        let states = try listener.query("SELECT most_common_vals::text AS v FROM pg_stats WHERE tablename = 'transfers' AND attname = 'state'").first?["v"]
        #expect(states == "{pending}", "the statistics count the batch's pending rows")
        #expect(Harness.waitUntil(timeout: 20) { enqueued.withLock { $0 != nil } })
        #expect(try enqueued.withLock { try $0?.get() } != nil)

        #expect(try leases.claimPlanning(lease: 30, limit: 100, connections: 4).claims.count == 100)
        let statements = try ClaimPlans.statements(conn)
        #expect(statements.count >= 2, "the slot rows, and the rest of the batch")
        for statement in statements {
            let plan = try ClaimPlans.plan(conn, statement, host: host, connections: 4)
            #expect(!plan.contains("Seq Scan on transfers"), "\(plan)")
        }
    }

    @Test("a batch small beside the rows the statistics already count is enqueued without sampling the table again")
    func smallBatchOnBigTableKeepsStatistics() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let batches = Batches(conn)
        func enqueue(_ name: String, _ count: Int) throws {
            let entries = (0..<count).map { NewTransfer(url: "http://stats.test/\(name)/f-\($0)", dest: "\(name)/f-\($0)") }
            #expect(try batches.enqueue(entries, batch: name).inserted == count)
        }
        func analyzed() throws -> String? {
            try conn.query("SELECT analyze_count::text AS n FROM pg_stat_user_tables WHERE relname = 'transfers'").first?["n"]
        }
        try enqueue("first", 20_000)
        #expect(try analyzed() == "1", "a table never analyzed")
        try enqueue("small", 1999)
        #expect(try analyzed() == "1", "under a tenth of the 20 000 rows counted")
        try enqueue("third", 2200)
        #expect(try analyzed() == "2", "a tenth of the 20 000 rows counted")
    }
}
