import HaulPostgres
import HaulQueue
import HaulTestSupport
import Testing

/// The claim a lane makes first after a segment or a batch (`Lane.findWork`): only the work of
/// an origin that holds no slot, and never of a lower priority than the lane's last.
@Suite("claims on idle origins")
struct IdleHostClaimTests {
    @Test("a claim on idle origins skips an origin that holds a slot and work below its priority")
    func idleHostsOfNoLowerPriority() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        func entry(_ host: String, _ name: String, priority: Int = 0) -> NewTransfer {
            var entry = NewTransfer(url: "http://\(host)/\(name)", dest: "\(host)/\(name)")
            entry.priority = priority
            return entry
        }
        _ = try Batches(conn).enqueue([entry("busy.test", "a"), entry("busy.test", "b")], batch: "busy")
        let leases = TransferLeases(conn, workerID: "worker-a")
        #expect(try leases.claimPlanning(lease: 30, limit: 1, connections: 1).claims.map(\.info.host) == ["busy.test"])
        _ = try Batches(conn).enqueue([entry("low.test", "c", priority: -1), entry("high.test", "d", priority: 5)], batch: "others")

        // Priority 5 or more: only high.test's file, though busy.test's comes first in the queue.
        let high = try leases.claimPlanning(lease: 30, limit: 10, connections: 1, idleHostsFrom: 5)
        #expect(high.claims.map(\.info.host) == ["high.test"])
        // From priority 0: low.test's file is below it, busy.test holds a slot, high.test too now.
        #expect(try leases.claimPlanning(lease: 30, limit: 10, connections: 1, idleHostsFrom: 0).claims.isEmpty)
        #expect(try leases.claimPlanning(lease: 30, limit: 10, connections: 1, idleHostsFrom: -1).claims.map(\.info.host) == ["low.test"])
    }
}
