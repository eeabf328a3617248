import Foundation
import HaulTestSupport
import Testing

/// A transfer belongs to the storage its planner wrote to (`transfers.storage`): a worker on
/// other storage leaves its segments and its finalizing alone.
@Suite("storage binding")
struct StorageBindingTests {
    @Test("segments planned on one storage root are fetched and finalized only by workers on that root, never into another")
    func otherStorageLeavesSegments() throws {
        let cluster = try Cluster("bound")
        let other = Harness.temporaryDirectory("bound-other")
        defer { try? FileManager.default.removeItem(atPath: other) }
        let served = try Origin.file("bound/\(UUID().uuidString.prefix(8)).bin", size: 4 * Reliability.mebibyte)
        let id = try cluster.enqueue(Harness.origin + served.path, ["--dest", "bound.bin", "--segment-size", "512KiB"])
        // Only a planner on the cluster's root: the transfer is planned there, its segments queued.
        let planner = try cluster.startWorker(["--roles", "planner"])
        let planned = Harness.waitUntil(timeout: 60) {
            (try? cluster.database.scalar("SELECT state FROM transfers WHERE id = \(id)")) == "downloading"
        }
        #expect(planned, "\(planner.stderr)")
        #expect(try cluster.database.scalar("SELECT storage FROM transfers WHERE id = \(id)") == "file://" + cluster.storage)
        // A worker on another root starts first and would take every queued segment; one on the right root then finishes.
        let stranger = try cluster.startWorker(["--concurrency", "8"], storage: other)
        _ = Harness.waitUntil(timeout: 30) { stranger.stderr.contains("worker started") || stranger.stdout.contains("worker started") }
        _ = try cluster.startWorker(["--roles", "fetcher,finalizer"])
        let final = try cluster.waitFinal([id], timeout: 120)
        let status = try cluster.status(id)
        #expect(final == ["done"], "\(status)")
        #expect(cluster.sha256("bound.bin") == served.sha256)
        #expect(try FileManager.default.contentsOfDirectory(atPath: other).filter { !$0.hasPrefix(".haul") }.isEmpty)
    }
}
