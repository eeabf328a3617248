import Foundation
import HaulTestSupport
import Testing

/// A file whose bytes are all in is published while a backlog of other segments is still
/// queued, not when the queue has emptied (a lane finalizes before it fetches more).
@Suite("publishing under a backlog")
struct PublishPromptlyTests {
    @Test("a finished file is published while another transfer's segments are still queued")
    func publishesBeforeTheBacklogDrains() throws {
        let cluster = try Cluster("publish-promptly")
        defer { cluster.stopWorkers() }
        let small = try Origin.file("publish/small.bin", size: 8 * 1_048_576)
        let big = try Origin.file("publish/big.bin", size: 64 * 1_048_576)
        // The small file is planned first (lower id); the big one comes at 4 MiB/s a connection,
        // so its 16 segments keep both lanes busy for several seconds after the small one's are in.
        let smallID = try cluster.enqueue(Harness.origin + small.path, ["--dest", "small.bin", "--segment-size", "4MiB"])
        let bigID = try cluster.enqueue(Harness.origin + "/slow" + big.path, ["--dest", "big.bin", "--segment-size", "4MiB"])
        try cluster.startWorker(["--concurrency", "2"])
        var queuedWhenPublished = -1
        let published = try Harness.waitUntil(timeout: 60) {
            guard try cluster.state(smallID) == "done" else { return false }
            queuedWhenPublished = Int(try cluster.database.scalar("SELECT count(*) FROM segments WHERE transfer_id = \(bigID) AND state = 'queued'")) ?? -1
            return true
        }
        #expect(published)
        #expect(queuedWhenPublished > 0, "the big file's backlog was still queued when the small file was published")
        #expect(cluster.sha256("small.bin") == small.sha256)
    }
}
