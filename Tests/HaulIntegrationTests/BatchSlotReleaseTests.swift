import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import HaulTestSupport
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

    @Test("released slots are free for other claimers at once, the batch still holds its leases, and a lost lease releases nothing")
    func releaseIsEarlyAndFenced() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let host = "release.test"
        try HostLimits.set(conn, host: host, limit: 2)
        let store = TransferStore(conn)
        for index in 0..<8 { _ = try store.enqueue(NewTransfer(url: "http://\(host)/f-\(index)", dest: "f-\(index)", segmentSize: 4 << 20)) }
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
        let files = first.map { claim in
            TransferLeases.ProbedFile(
                claim: claim,
                plan: TransferLeases.Plan(
                    dest: claim.info.dest ?? "", host: host, size: 1, etag: nil, lastModified: nil, contentType: nil, acceptsRanges: true,
                    ranges: SegmentPlan(size: 1, segmentSize: 4 << 20).ranges, unknownLength: false),
                digest: nil, unchanged: false)
        }
        #expect(try a.finish(probed: files).count == 3)
        #expect(try slots(database, host) == ("2", "2"))

        // B's leases run out and C takes the files over: B's late release must not free C's slots.
        _ = try database.scalar("UPDATE transfers SET lease_expires_at = now() - interval '1 second' WHERE worker_id = 'worker-b' AND state = 'planning'")
        #expect(try TransferLeases.rescueExpired(on: conn) == 3)
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
}
