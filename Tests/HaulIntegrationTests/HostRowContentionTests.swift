import Foundation
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Testing

/// A claimer never queues on the row of a host another claimer is serving (issue 55, item 5).
/// Sixteen workers at `-x 4` had up to 59 sessions waiting there, each taking the row in turn to
/// find the host full, while the slots given back and the segments completed (their counters are
/// on that row) waited behind them: 16 workers took half again as long as 4 for a batch of small
/// files. A claim now skips a held row, takes nothing and says so; the lane looks again shortly.
/// HaulQueue's own statements against the real database, another claimer played by a
/// transaction that holds the host's row as a claim does.
@Suite("claimers never wait for a host row another claimer holds")
struct HostRowContentionTests {
    static let host = "contended.test"

    /// A claimer's connection: a statement that waits for a lock fails after 5 s instead of
    /// hanging the test (the other claimer here holds the row until the test lets it go).
    private func claimer(_ database: TestDatabase) throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: database.url)
        try connection.query("SET lock_timeout = '5s'")
        return connection
    }

    /// Another claimer in the middle of its claim: it holds the row of `host`.
    private func holdHostRow(_ database: TestDatabase, host: String = Self.host) throws -> PostgresConnection {
        let other = try PostgresConnection(conninfo: database.url)
        try other.query("BEGIN")
        try other.query("SELECT host FROM origin_hosts WHERE host = $1 FOR UPDATE", [host])
        return other
    }

    @Test("a planning claim while another claimer holds the host's row takes nothing, says so, and takes its share once the row is let go")
    func planningClaimSkipsAHeldHost() throws {
        let database = try TestDatabase()
        let setup = try PostgresConnection(conninfo: database.url)
        try HostLimits.set(setup, host: Self.host, limit: 8)
        _ = try Batches(setup).enqueue((0..<40).map { NewTransfer(url: "http://\(Self.host)/f-\($0)", dest: "f-\($0)") }, batch: "contended")
        let leases = TransferLeases(try claimer(database), workerID: "worker-b")

        let other = try holdHostRow(database)
        let skipped = try leases.claimPlanning(lease: 30, limit: 16, connections: 4)
        #expect(skipped.claims.isEmpty && skipped.hostContended, "nothing taken, without waiting for the row")
        #expect(try database.scalar("SELECT count(*) FROM transfers WHERE lease_token IS NOT NULL") == "0", "no transfer leased")
        try other.query("COMMIT")

        let batch = try leases.claimPlanning(lease: 30, limit: 16, connections: 4)
        #expect(batch.claims.count == 16 && batch.connections == 4 && !batch.hostContended)
        #expect(try database.scalar("SELECT busy FROM origin_hosts WHERE host = '\(Self.host)'") == "4", "the host's limit counted exactly")
    }

    @Test("a segment claim while another claimer holds the host's row takes nothing, says so, and takes a segment once the row is let go")
    func segmentClaimSkipsAHeldHost() throws {
        let database = try TestDatabase()
        let setup = try PostgresConnection(conninfo: database.url)
        try HostLimits.set(setup, host: Self.host, limit: 2)
        _ = try LeaseProtocolTests.downloading(database, segments: 4, host: Self.host)
        let leases = SegmentLeases(try claimer(database), workerID: "worker-b")

        let other = try holdHostRow(database)
        let skipped = try leases.attempt(limit: 1, lease: 30)
        #expect(skipped.segments.isEmpty && skipped.hostContended, "nothing taken, without waiting for the row")
        #expect(try database.scalar("SELECT count(*) FROM segments WHERE state = 'running'") == "0")
        try other.query("COMMIT")

        for _ in 0..<2 {
            let taken = try leases.attempt(limit: 1, lease: 30)
            #expect(taken.segments.count == 1 && !taken.hostContended)
        }
        // At the host's limit: nothing, and no claimer held the row.
        let full = try leases.attempt(limit: 1, lease: 30)
        #expect(full.segments.isEmpty && !full.hostContended)
        #expect(try database.scalar("SELECT busy FROM origin_hosts WHERE host = '\(Self.host)'") == "2", "the host's limit counted exactly")
    }

    @Test("a claim passes by the host whose row another claimer holds and takes the next host with room")
    func claimTakesTheNextHostWithRoom() throws {
        let database = try TestDatabase()
        let setup = try PostgresConnection(conninfo: database.url)
        let next = "next.test"
        for host in [Self.host, next] { try HostLimits.set(setup, host: host, limit: 8) }
        // The held host has the oldest work of both kinds.
        _ = try Batches(setup).enqueue((0..<4).map { NewTransfer(url: "http://\(Self.host)/f-\($0)", dest: "f-\($0)") }, batch: "first")
        _ = try Batches(setup).enqueue((0..<4).map { NewTransfer(url: "http://\(next)/g-\($0)", dest: "g-\($0)") }, batch: "second")
        _ = try LeaseProtocolTests.downloading(database, segments: 2, host: Self.host)
        _ = try LeaseProtocolTests.downloading(database, segments: 2, host: next)
        let connection = try claimer(database)

        let other = try holdHostRow(database)
        let batch = try TransferLeases(connection, workerID: "worker-b").claimPlanning(lease: 30, limit: 16, connections: 4)
        #expect(batch.claims.count == 4 && batch.claims.allSatisfy { $0.info.host == next } && !batch.hostContended, "\(batch.claims.map(\.info.host))")
        let segment = try SegmentLeases(connection, workerID: "worker-b").attempt(limit: 1, lease: 30)
        #expect(segment.segments.map(\.transfer.host) == [next] && !segment.hostContended)
        #expect(try database.scalar("SELECT busy FROM origin_hosts WHERE host = '\(Self.host)'") == "0", "nothing taken of the held host")
        try other.query("COMMIT")

        // Let go, the oldest work's host comes first again.
        let taken = try SegmentLeases(connection, workerID: "worker-b").attempt(limit: 1, lease: 30)
        #expect(taken.segments.map(\.transfer.host) == [Self.host])
    }

    @Test("a worker whose origin's row another claimer holds never waits for it, and fetches the file once it is let go")
    func workerNeverWaitsForAHeldHost() throws {
        let cluster = try Cluster("contended-worker")
        let file = try Origin.file("contended/\(UUID().uuidString.prefix(8))/a.bin", size: 4096)
        let origin = URL(string: Harness.origin)!
        let host = "\(origin.host!):\(origin.port!)"
        #expect(try cluster.haul(["host-limit", "set", host, "8"]).status == 0)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "a.bin"])
        let other = try holdHostRow(cluster.database, host: host)
        _ = try cluster.startWorker(["--concurrency", "4"])
        try #require(Harness.waitUntil(timeout: 20) { try cluster.database.scalar("SELECT count(*) FROM workers") == "1" })
        // Its lanes claim at once and, finding the row held, look again and again: none of its
        // sessions ever waits for a lock (they had waited for the row as long as it was held).
        let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        let waited = try Harness.waitUntil(timeout: 3) { try cluster.database.scalar(waiting) != "0" }
        #expect(!waited, "a session waited for a lock")
        try other.query("COMMIT")
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(cluster.sha256("a.bin") == file.sha256)
    }
}
