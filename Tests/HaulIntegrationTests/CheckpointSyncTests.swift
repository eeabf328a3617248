import Foundation
import HaulTestSupport
import Testing

/// A checkpoint is recorded only after its bytes are durable, so the worker must sync the file
/// it wrote, not whatever the name means by then: after a transfer publishes (renames) its
/// partial file, the next transfer to the same destination writes a new partial file under the
/// old name. And a published file must not stay open in a worker: a deleted file's space would
/// stay pinned until the worker stops.
@Suite("checkpoints sync the file being written")
struct CheckpointSyncTests {
    @Test("a second transfer to a destination syncs its own partial file; no published file stays open in the worker")
    func syncsTheFileBeingWritten() throws {
        let cluster = try Cluster("checkpoint-sync")
        defer { cluster.stopWorkers() }
        let first = try Origin.file("sync/first.bin", size: 12 * 1_048_576)
        let second = try Origin.file("sync/second.bin", size: 48 * 1_048_576)
        let worker = try cluster.startWorker(["--concurrency", "2"])
        let firstID = try cluster.enqueue(Harness.origin + first.path, ["--dest", "same.bin", "--segment-size", "4MiB"])
        #expect(try cluster.waitFinal([firstID]) == ["done"])
        let published = cluster.storage + "/same.bin"
        #expect(cluster.sha256("same.bin") == first.sha256)
        #expect(Self.descriptors(of: worker.pid, naming: Self.identity(published)).isEmpty, "the published file is not held open")

        // The second comes slowly (4 MiB/s a connection), so checkpoints are made while it runs.
        let secondID = try cluster.enqueue(Harness.origin + "/slow" + second.path, ["--dest", "same.bin", "--segment-size", "8MiB"])
        let checkpointed = try Harness.waitUntil(timeout: 60) {
            try cluster.database.scalar("SELECT coalesce(sum(bytes_done), 0) > 0 FROM segments WHERE transfer_id = \(secondID)") == "t"
        }
        #expect(checkpointed)
        let partial = cluster.storage + "/same.bin.haul-partial"
        let partialIdentity = Self.identity(partial)
        #expect(partialIdentity != nil)
        #expect(!Self.descriptors(of: worker.pid, naming: partialIdentity).isEmpty, "the new partial file is the one open")
        #expect(Self.descriptors(of: worker.pid, naming: Self.identity(published)).isEmpty, "nothing syncs the first transfer's file")
        #expect(try cluster.waitFinal([secondID], timeout: 90) == ["done"])
        #expect(cluster.sha256("same.bin") == second.sha256)
        #expect(Self.descriptors(of: worker.pid, naming: Self.identity(published)).isEmpty, "the second published file is not held open")
    }

    private struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
    }

    private static func identity(_ path: String) -> Identity? {
        var attributes = stat()
        guard stat(path, &attributes) == 0 else { return nil }
        return Identity(device: UInt64(attributes.st_dev), inode: UInt64(attributes.st_ino))
    }

    /// The worker's descriptors open on the file `identity` names (none when it is nil).
    private static func descriptors(of pid: pid_t, naming identity: Identity?) -> [String] {
        guard let identity else { return [] }
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { Self.identity(folder + "/" + $0) == identity }
    }
}
