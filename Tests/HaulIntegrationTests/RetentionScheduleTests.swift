import Foundation
import HaulTestSupport
import Testing

/// A worker prunes on a schedule that follows the retention (every quarter of it, between 10 s
/// and 10 minutes), not every 10 minutes whatever the retention: a short retention is kept.
@Suite("retention schedule")
struct RetentionScheduleTests {
    @Test("with HAUL_RETENTION=20s a worker prunes a finished transfer soon after its 20 s, not 10 minutes later; the file stays")
    func shortRetentionIsKept() throws {
        let cluster = try Cluster("retention-schedule")
        defer { cluster.stopWorkers() }
        let file = try Origin.file("retention/short.bin", size: 4096)
        try cluster.startWorker([], environment: ["HAUL_RETENTION": "20s"])
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "short.bin"])
        #expect(try cluster.waitFinal([id]) == ["done"])
        let pruned = try Harness.waitUntil(timeout: 90) {
            try cluster.database.scalar("SELECT count(*) FROM transfers WHERE id = \(id)") == "0"
        }
        #expect(pruned, "pruned within a quarter of the retention after it passed, give or take a round")
        #expect(cluster.sha256("short.bin") == file.sha256, "pruning forgets the row, never the file")
    }
}
