import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Synchronization
import Testing

/// A probe batch gives its host slots back as soon as its requests have ended
/// (`TransferLeases.releaseSlots`), before it syncs, publishes and records its files; HaulQueue's
/// own code against the real database.
@Suite("probe batches give their host slots back early")
struct BatchSlotReleaseTests {
    /// `origin_hosts.busy` of `host`, and the slot-holding planning rows counted beside it.
    private func slots(_ database: TestDatabase, _ host: String) throws -> (busy: String, holding: String) {
        (
            try database.scalar("SELECT busy FROM origin_hosts WHERE host = '\(host)'"),
            try database.scalar("SELECT count(*) FROM transfers WHERE host = '\(host)' AND state = 'planning' AND holds_slot")
        )
    }

    /// A database with `count` pending transfers of `host`, whose limit is `limit`, and a connection to it.
    private func pending(_ count: Int, on host: String, limit: Int) throws -> (TestDatabase, PostgresConnection) {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        try HostLimits.set(conn, host: host, limit: limit)
        let store = TransferStore(conn)
        for index in 0..<count { _ = try store.enqueue(NewTransfer(url: "http://\(host)/f-\(index)", dest: "f-\(index)", segmentSize: 4 << 20)) }
        return (database, conn)
    }

    @Test("released slots are free for other claimers at once, the batch still holds its leases, and a lost lease releases nothing")
    func releaseIsEarlyAndFenced() throws {
        let host = "release.test"
        let (database, conn) = try pending(8, on: host, limit: 2)
        let a = TransferLeases(conn, workerID: "worker-a")
        let b = TransferLeases(try PostgresConnection(conninfo: database.url), workerID: "worker-b")

        // A claims a batch of 3 over 2 connections: the host is full.
        let batch = try a.claimPlanning(lease: 30, limit: 3, connections: 4)
        let (first, width) = (batch.claims, batch.connections)
        #expect(first.count == 3 && width == 2)
        #expect(try slots(database, host) == ("2", "2"))
        #expect(try b.claimPlanning(lease: 30, limit: 3, connections: 2).claims.isEmpty, "no free slot while A's requests run")

        // A's requests ended: its slots are free, its rows stay planning under its leases.
        try a.releaseSlots(first)
        #expect(try slots(database, host) == ("0", "0"))
        #expect(try a.held(first).count == 3, "the batch keeps its leases until it records its files")
        let secondBatch = try b.claimPlanning(lease: 30, limit: 3, connections: 2)
        let (second, secondWidth) = (secondBatch.claims, secondBatch.connections)
        #expect(second.count == 3 && secondWidth == 2, "another worker fetches while A records")
        #expect(try slots(database, host) == ("2", "2"))

        // A records its files: no slot moves, B's stay counted.
        let files = first.map { TransferLeases.ProbedFile.oneByte($0, host: host) }
        #expect(try a.finish(probed: files).count == 3)
        #expect(try slots(database, host) == ("2", "2"))

        // B's leases run out and C takes the files over: B's late release must not free C's slots.
        // Only B's slot rows were `planning`; its third file stayed `pending` under its lease, and
        // is pending again as it stands once that runs out.
        _ = try database.scalar("UPDATE transfers SET lease_expires_at = now() - interval '1 second' WHERE worker_id = 'worker-b'")
        #expect(try TransferLeases.rescueExpired(on: conn) == 2)
        let c = TransferLeases(try PostgresConnection(conninfo: database.url), workerID: "worker-c")
        let third = try c.claimPlanning(lease: 30, limit: 3, connections: 2).claims
        #expect(Set(third.map(\.info.id)) == Set(second.map(\.info.id)), "C holds what B held")
        try b.releaseSlots(second)
        #expect(try slots(database, host) == ("2", "2"), "a lost lease releases nothing")
        try c.releaseSlots(third)
        #expect(try slots(database, host) == ("0", "0"))
    }

    @Test("a host's pending files that fit in one batch are shared by as many batches as its free slots allow, down to 16")
    func shortListIsShared() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let store = TransferStore(conn)
        func enqueue(_ host: String, _ indexes: Range<Int>) throws {
            for index in indexes { _ = try store.enqueue(NewTransfer(url: "http://\(host)/f-\(index)", dest: "\(host)/f-\(index)", segmentSize: 4 << 20)) }
        }
        func urls(_ host: String, _ indexes: Range<Int>) -> [String] { indexes.map { "http://\(host)/f-\($0)" } }
        let host = "share.test"
        try HostLimits.set(conn, host: host, limit: 8)
        try enqueue(host, 0..<40)
        let a = TransferLeases(conn, workerID: "worker-a")
        let b = TransferLeases(try PostgresConnection(conninfo: database.url), workerID: "worker-b")

        // 40 pending, 4 connections of 8 free slots: A takes its half, oldest first.
        let batch = try a.claimPlanning(lease: 30, limit: 1024, connections: 4)
        let (first, width) = (batch.claims, batch.connections)
        #expect(first.map(\.info.url) == urls(host, 0..<20))
        #expect(width == 4)
        #expect(batch.morePending, "A's share left files for another lane")
        // B has the 4 slots left: the rest is its share, fetched while A's batch runs.
        let secondBatch = try b.claimPlanning(lease: 30, limit: 1024, connections: 4)
        let (second, secondWidth) = (secondBatch.claims, secondBatch.connections)
        #expect(second.map(\.info.url) == urls(host, 20..<40))
        #expect(secondWidth == 4)
        #expect(!secondBatch.morePending, "B took the last of them")
        #expect(try slots(database, host) == ("8", "8"))

        // A batch limit the host's pending files reach is taken whole, as before.
        try enqueue(host, 40..<42)
        try a.releaseSlots(first)
        #expect(try a.claimPlanning(lease: 30, limit: 2, connections: 4).claims.map(\.info.url) == urls(host, 40..<42))
        // A list of fewer than 16 is not cut: one batch (its share would be 5).
        let other = "short.test"
        try HostLimits.set(conn, host: other, limit: 8)
        try enqueue(other, 0..<10)
        #expect(try b.claimPlanning(lease: 30, limit: 1024, connections: 4).claims.map(\.info.url) == urls(other, 0..<10))
    }

    @Test("a batch takes its rows past its slots without its host's row locked: slots given back meanwhile, and other claims, do not wait for it")
    func restOfABatchLeavesItsHostFree() throws {
        let host = "rest.test"
        let (database, conn) = try pending(40, on: host, limit: 4)
        let b = TransferLeases(conn, workerID: "worker-b")
        let held = try b.claimPlanning(lease: 30, limit: 2, connections: 2).claims
        #expect(try slots(database, host) == ("2", "2"))

        // A's first row taken without a slot sleeps 3 s: A's claim is caught moving the rest of its batch.
        _ = try database.scalar(
            """
            CREATE FUNCTION slow_rest() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF current_setting('test.slept', true) IS NULL THEN PERFORM set_config('test.slept', 'yes', true); PERFORM pg_sleep(3); END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER slow_rest BEFORE UPDATE ON transfers FOR EACH ROW
                WHEN (NEW.worker_id = 'worker-a' AND NEW.state = 'pending') EXECUTE FUNCTION slow_rest();
            """)
        let claimed = Outcome()
        let url = database.url
        Thread {
            let result = Result {
                try TransferLeases(try PostgresConnection(conninfo: url), workerID: "worker-a").claimPlanning(lease: 30, limit: 10, connections: 2)
            }
            claimed.value.withLock { $0 = result }
        }.start()
        #expect(try Harness.waitUntil(timeout: 20) { try database.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'") == "1" })

        // B gives its slots back and claims again: either would fail after a second waiting for A.
        _ = try conn.query("SET lock_timeout = '1s'")
        try b.releaseSlots(held)
        #expect(try b.claimPlanning(lease: 30, limit: 2, connections: 2).claims.count == 2)
        _ = try conn.query("RESET lock_timeout")

        #expect(Harness.waitUntil(timeout: 20) { claimed.value.withLock { $0 != nil } })
        let batch = try #require(try claimed.value.withLock { try $0?.get() })
        #expect(batch.claims.count == 10 && batch.connections == 2, "A's slot rows first, then the rest of its batch")
        #expect(try slots(database, host) == ("4", "4"))
        #expect(
            try database.scalar(
                "SELECT count(*) FROM transfers WHERE worker_id = 'worker-a' AND state = 'pending' AND lease_expires_at > now()") == "8",
            "the rest of the batch is leased, still pending")
        #expect(try database.scalar("SELECT count(DISTINCT started_at) FROM transfers WHERE worker_id = 'worker-a'") == "1", "one start for the batch")
    }

    /// What a claim on another thread came to.
    final class Outcome: Sendable {
        let value = Mutex<Result<TransferLeases.PlanningBatch, any Error>?>(nil)
    }

    @Test("the batch claim runs one generic plan per connection, reaching its rows through the primary key")
    func batchClaimIsPlannedOnce() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let host = "plan.test"
        try HostLimits.set(conn, host: host, limit: 64)
        let entries = (0..<3000).map { NewTransfer(url: "http://\(host)/f-\($0)", dest: "f-\($0)", segmentSize: 4 << 20) }
        _ = try Batches(conn).enqueue(entries, batch: "plan")
        _ = try conn.query("ANALYZE transfers")
        let leases = TransferLeases(conn, workerID: "worker-a")
        for _ in 0..<7 { #expect(try leases.claimPlanning(lease: 30, limit: 100, connections: 4).claims.count == 100) }
        let statements = try ClaimPlans.statements(conn)
        #expect(statements.count == 2, "the slot rows, and the rest of the batch")
        for statement in statements {
            #expect(statement["custom_plans"] == "0" && statement["generic_plans"] == "7", "\(statement["name"] ?? "")")
            let plan = try ClaimPlans.plan(conn, statement, host: host, connections: 4)
            #expect(!plan.contains("Seq Scan on transfers"), "\(plan)")
        }
    }
}
