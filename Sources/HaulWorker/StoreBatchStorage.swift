import HaulCore
import HaulQueue
import HaulStorage

/// `BatchProbe` on a storage that stores whole files by itself (`Storage.batchStore`, such as a
/// bucket's `PutObject`s): what its lookup saw at a name is what the rule against replacing
/// others' files is asked of, and each file is stored once its sink settles.
struct StoreBatchStorage: BatchStorage {
    let store: any BatchStore
    /// The batch's leases, which each file's sink checks before the file becomes visible.
    let fence: any BatchFence
    let database: ResilientConnection
    let config: WorkerConfig

    var noun: String { store.noun }
    var storing: String { store.storing }
    var lookupWidth: Int { store.lookupWidth }

    func takesWhole(size: Int64) -> Bool { store.takesWhole(size: size) }

    func lookUp(_ claims: [TransferLeases.Claim]) -> [Int64?] {
        store.lookUp(claims.map { (id: $0.info.id, dest: $0.info.dest) })
    }

    func refuseOthers(_ dest: String, of claim: TransferLeases.Claim) throws {
        let seen = try store.seen(dest, of: claim.info.id, url: claim.info.url)
        try OthersFiles.refuse(dest, of: claim, config: config, database: database, seen: seen)
    }

    func occupant(of dest: String, for claim: TransferLeases.Claim) throws -> Occupant? {
        try store.occupant(of: dest, for: claim.info.id, url: claim.info.url)
    }

    func sink(for plan: TransferLeases.Plan, of claim: TransferLeases.Claim) throws -> StoredSink {
        let info = claim.info
        let file = WholeFile(
            transferID: info.id, dest: plan.dest, url: info.url, size: plan.size ?? 0, contentType: plan.contentType,
            expectedDigest: info.expectedDigest, earlierUploadID: info.objectUploadID)
        return StoredSink(try store.sink(for: file, fence: fence))
    }

    /// Waits for each file to be stored; one that could not be has its transfer retried.
    func store(_ whole: [BatchedProbe<Self>], unchanged: [BatchedProbe<Self>], planner: Planner) throws -> [BatchedProbe<Self>] {
        let stored = whole.filter { probe in
            do {
                try probe.sink?.file.settle()
                return true
            } catch {
                planner.planningFailed(probe.claim, error: error)
                return false
            }
        }
        return stored + unchanged
    }
}

/// A storage's own whole-file sink as the batch's probes hold it.
final class StoredSink: WholeFileSink {
    let file: any StoredWholeFile

    init(_ file: any StoredWholeFile) { self.file = file }

    func write(_ bytes: UnsafeRawBufferPointer, completing: Bool) throws { try file.write(bytes, completing: completing) }
    func complete() throws { try file.complete() }
    func discard() { file.discard() }
}
