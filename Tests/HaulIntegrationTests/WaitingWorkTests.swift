import Foundation
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Testing

/// `WaitingWork.waitsBeside`, the question behind yielding, against the real rows: a lane
/// yields only from an origin holding two slots or more to another origin's work holding none,
/// or from a transfer holding two lanes or more to a new transfer of its own origin.
@Suite("waiting work")
struct WaitingWorkTests {
    let database: TestDatabase
    let connection: PostgresConnection

    init() throws {
        database = try TestDatabase()
        connection = try PostgresConnection(conninfo: database.url)
    }

    /// Claims `count` segments of a fresh transfer of `big.test` (its host then holds `count` slots).
    func running(_ count: Int) throws -> [ClaimedSegment] {
        _ = try LeaseProtocolTests.downloading(database, segments: 4, host: "big.test:8080")
        return try SegmentLeases(connection, workerID: "w").claim(limit: count, lease: 30)
    }

    func enqueue(_ url: String, _ extra: [String] = []) throws {
        let result = try Run.haul(["enqueue", url, "--dest", "d-\(UUID().uuidString.prefix(8))"] + extra, database: database.url)
        try #require(result.status == 0, "\(result.stderr)")
    }

    func waits(_ segment: ClaimedSegment) throws -> Bool {
        try WaitingWork.waitsBeside(segment, on: connection, workerID: "w", scope: .fleet)
    }

    @Test("an origin holding two slots yields to a pending transfer of an origin holding none")
    func yieldsToIdleOrigin() throws {
        let held = try running(2)
        #expect(held.count == 2)
        #expect(try !waits(held[0]), "nothing waits yet")
        try enqueue("http://small.test/a.bin")
        #expect(try waits(held[0]))
    }

    @Test("an origin holding one slot keeps it: the giver never starves")
    func keepsItsOnlyLane() throws {
        let held = try running(1)
        try enqueue("http://small.test/a.bin")
        #expect(try !waits(held[0]))
    }

    @Test("no yield to a paused origin, to lower priority, or to an origin that already holds a slot")
    func noYieldWhereItWouldNotHelp() throws {
        let held = try running(2)
        try enqueue("http://paused.test/a.bin")
        #expect(try Run.haul(["host-limit", "pause", "paused.test"], database: database.url).status == 0)
        try enqueue("http://low.test/a.bin", ["--priority", "-1"])
        #expect(try !waits(held[0]))
        try enqueue("http://busy.test/a.bin")
        try connection.query("UPDATE origin_hosts SET busy = 1 WHERE host = 'busy.test'")
        #expect(try !waits(held[0]))
        try connection.query("UPDATE origin_hosts SET busy = 0 WHERE host = 'busy.test'")
        #expect(try waits(held[0]))
    }

    @Test("a finished file that no finalizer holds waits for a lane too")
    func finalizingWaits() throws {
        let held = try running(2)
        try enqueue("http://done.test/a.bin")
        try connection.query("UPDATE transfers SET state = 'finalizing' WHERE host = 'done.test'")
        #expect(try waits(held[0]))
        try connection.query("UPDATE transfers SET lease_token = gen_random_uuid(), lease_expires_at = now() + interval '1 minute' WHERE host = 'done.test'")
        #expect(try !waits(held[0]), "one a finalizer holds has its lane")
    }

    @Test("a transfer holding two lanes yields to a new transfer of its own origin")
    func yieldsToNewTransferOfItsOrigin() throws {
        let held = try running(2)
        #expect(held.count == 2)
        try enqueue("http://big.test:8080/new.bin")
        #expect(try waits(held[0]))
    }

    @Test("a transfer holding one lane keeps it for a new transfer of its origin, as it does for a lower priority, a claimed one or a paused origin")
    func keepsItsLaneFromItsOrigin() throws {
        let one = try running(1)
        try enqueue("http://big.test:8080/new.bin")
        #expect(try !waits(one[0]), "its only lane")
        try connection.query("DELETE FROM transfers WHERE state = 'pending'")
        let held = try SegmentLeases(connection, workerID: "w").claim(limit: 1, lease: 30) + one
        #expect(held.count == 2 && held[0].transferID == held[1].transferID)
        try enqueue("http://big.test:8080/low.bin", ["--priority", "-1"])
        #expect(try !waits(held[0]), "a lower priority")
        try enqueue("http://big.test:8080/claimed.bin")
        try connection.query(
            "UPDATE transfers SET lease_token = gen_random_uuid(), lease_expires_at = now() + interval '1 minute' WHERE url LIKE '%/claimed.bin'")
        #expect(try !waits(held[0]), "one a batch claim holds")
        try connection.query("UPDATE transfers SET lease_token = NULL WHERE url LIKE '%/claimed.bin'")
        #expect(try waits(held[0]))
        #expect(try Run.haul(["host-limit", "pause", "big.test:8080"], database: database.url).status == 0)
        #expect(try !waits(held[0]), "a paused origin")
    }

    @Test("a transfer holding two lanes yields to another downloading transfer of its origin that holds none, which the claim after a yield takes")
    func yieldsToIdleTransferOfItsOrigin() throws {
        let held = try running(2)
        let second = try LeaseProtocolTests.downloading(database, segments: 2, host: "big.test:8080")
        #expect(try waits(held[0]))
        let first = try connection.query("SELECT transfer_id FROM segments WHERE state = 'queued' ORDER BY priority DESC, id LIMIT 1").first?.int64(
            "transfer_id")
        #expect(first == held[0].transferID, "in the queue's order the first transfer's segments come first")
        let taken = try SegmentLeases(connection, workerID: "w").claim(limit: 1, lease: 30, pick: .idleTransfers(from: 0))
        #expect(taken.map(\.transferID) == [second], "the claim after a yield takes the transfer that held no lane")
        #expect(try !waits(held[0]), "each transfer holds a lane now")
        #expect(try SegmentLeases(connection, workerID: "w").claim(limit: 1, lease: 30, pick: .idleTransfers(from: 0)).isEmpty)
    }
}
