import Foundation
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Testing

/// Every worker's rescuer may put the same expired leases back at once (a fleet whose small-file
/// batches' leases ran out together). Two plain `UPDATE`s took those rows in their own scan
/// orders and deadlocked; a rescuer now takes them in id order and skips the rows another one
/// holds, so it never waits on a row another rescuer locked and no cycle of waits can form.
/// HaulQueue's own statements against the real database.
@Suite("rescuers never wait on each other's rows")
struct RescueLockTests {
    static let host = "rescue-lock.test"

    /// A rescuer's connection: a statement that waits on a lock fails after 5 s instead of
    /// hanging the test (the server's deadlock detector would pick a victim much sooner).
    private func rescuer(_ database: TestDatabase) throws -> PostgresConnection {
        let connection = try PostgresConnection(conninfo: database.url)
        try connection.query("SET statement_timeout = '5s'")
        return connection
    }

    @Test("expired planning leases: a rescue while another holds one of the rows puts the others back at once, the held one after")
    func planningRows() throws {
        let database = try TestDatabase()
        let setup = try PostgresConnection(conninfo: database.url)
        try HostLimits.set(setup, host: Self.host, limit: 8)
        let store = TransferStore(setup)
        for index in 0..<6 { _ = try store.enqueue(NewTransfer(url: "http://\(Self.host)/f-\(index)", dest: "f-\(index)", segmentSize: 4 << 20)) }
        // A small-file batch of 6 whose worker vanished: its leases ran out.
        let batch = try TransferLeases(setup, workerID: "gone").claimPlanning(lease: 30, limit: 6, connections: 8)
        try #require(batch.claims.count == 6)
        try setup.query("UPDATE transfers SET lease_expires_at = now() - interval '1 second' WHERE state = 'planning'")

        // Another worker's rescuer is in the middle of putting the batch back: it holds a row.
        let other = try PostgresConnection(conninfo: database.url)
        try other.query("BEGIN")
        try other.query("SELECT id FROM transfers WHERE id = (SELECT max(id) FROM transfers) FOR UPDATE")
        let rescuer = try rescuer(database)
        #expect(try TransferLeases.rescueExpired(on: rescuer) == 5, "the rows nobody holds, without waiting for the held one")
        try other.query("COMMIT")
        #expect(try TransferLeases.rescueExpired(on: rescuer) == 1)
        #expect(try database.scalar("SELECT count(*) FROM transfers WHERE state = 'pending'") == "6")
        #expect(try database.scalar("SELECT busy FROM origin_hosts WHERE host = '\(Self.host)'") == "0", "no slot left counted")
    }

    @Test("expired segment leases: a rescue while another holds one of the rows puts the others back at once, the held one after")
    func segmentRows() throws {
        let database = try TestDatabase()
        let setup = try PostgresConnection(conninfo: database.url)
        _ = try LeaseProtocolTests.downloading(database, segments: 6, host: Self.host)
        try setup.query("UPDATE segments SET state = 'running', lease_token = gen_random_uuid(), worker_id = 'gone'")
        try LeaseProtocolTests.expireLeases(setup)

        let other = try PostgresConnection(conninfo: database.url)
        try other.query("BEGIN")
        try other.query("SELECT id FROM segments WHERE id = (SELECT max(id) FROM segments) FOR UPDATE")
        let rescuer = try rescuer(database)
        #expect(try SegmentLeases.rescueExpired(on: rescuer) == 5, "the rows nobody holds, without waiting for the held one")
        try other.query("COMMIT")
        #expect(try SegmentLeases.rescueExpired(on: rescuer) == 1)
        #expect(try database.scalar("SELECT count(*) FROM segments WHERE state = 'queued'") == "6")
        #expect(try database.scalar("SELECT busy FROM origin_hosts WHERE host = '\(Self.host)'") == "0", "no slot left counted")
    }
}
