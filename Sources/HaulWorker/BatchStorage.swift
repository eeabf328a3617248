import HaulCore
import HaulQueue
import HaulStorage

/// `BatchProbe`'s storage: the worker's rules (leases, the rule against replacing others'
/// files, a partial file locked by another process) around the storage's own `BatchStore`,
/// which keeps the files (a folder's unnamed files and links, a bucket's `PutObject`s).
struct BatchStorage {
    let store: any BatchStore
    /// The batch's leases, which the store checks before a file becomes visible.
    let leases: BatchLeases
    let database: ResilientConnection
    let config: WorkerConfig

    /// What the log lines call a stored file ("file", "object").
    var noun: String { store.noun }
    /// What storing it is called in the log line of a lease lost after it ("publishing").
    var storing: String { store.storing }
    /// How many lookups by name run at once (a storage across the network: several).
    var lookupWidth: Int { store.lookupWidth }

    /// Whether the batch finishes a file of `size` bytes itself (else the fetchers do).
    func takesWhole(size: Int64) -> Bool { store.takesWhole(size: size) }

    /// Looks once, for the whole batch, at what is at each claim's destination: its size, `nil`
    /// when nothing is there or the origin is to name the file.
    func lookUp(_ claims: [TransferLeases.Claim]) -> [Int64?] {
        store.lookUp(claims.map { (id: $0.info.id, dest: $0.info.dest) })
    }

    /// - Throws: `destination-exists` when what `lookUp` found at `dest` is not `claim`'s to
    ///   replace (`OthersFiles`); it stays as it was.
    func refuseOthers(_ dest: String, of claim: TransferLeases.Claim) throws {
        let seen = try store.seen(dest, of: claim.info.id, url: claim.info.url)
        try OthersFiles.refuse(dest, of: claim, config: config, database: database, seen: seen)
    }

    /// What is at `dest`, a name the origin gave `claim`'s file (which `lookUp` could not look
    /// at), for the refusal of a get that keeps existing files; kept, as `lookUp`'s answers
    /// are, for the file's `sink`: what the refusal judged is what storing it may replace.
    func occupant(of dest: String, for claim: TransferLeases.Claim) throws -> Occupant? {
        try store.occupant(of: dest, for: claim.info.id, url: claim.info.url)
    }

    /// Where the body of `claim`'s file goes, once its head said that the response holds it
    /// whole. A partial file another process holds locked is retried later on a fleet worker,
    /// not failed; a `haul get` is refused at once (`LockedPartial`).
    func sink(for plan: TransferLeases.Plan, of claim: TransferLeases.Claim) throws -> any WholeFileSink {
        let info = claim.info
        let file = WholeFile(
            transferID: info.id, dest: plan.dest, url: info.url, size: plan.size ?? 0, contentType: plan.contentType,
            expectedDigest: info.expectedDigest, earlierUploadID: info.objectUploadID, generation: claim.generation)
        do {
            return try store.sink(for: file, fence: leases)
        } catch {
            throw LockedPartial.asMet(error, scope: config.scope)
        }
    }

    /// Stores the batch's whole files for good; one that cannot be is discarded and its
    /// transfer retried through `planner`, one whose lease was lost is left to the worker that
    /// holds it. The records fence the unchanged files by their leases (`finish(probed:)`).
    /// - Returns: the probes to record done: the files stored, and those of `unchanged`.
    func store(_ whole: [BatchedProbe], unchanged: [BatchedProbe], planner: Planner) throws -> [BatchedProbe] {
        let written = whole.filter { $0.sink != nil }
        let claims = Dictionary(written.map { ($0.claim.info.id, $0.claim) }, uniquingKeysWith: { first, _ in first })
        let outcomes = try store.store(written.compactMap(\.sink), fence: leases) { file in
            guard let claim = claims[file.transferID] else {
                throw HaulError(.internal, "transfer \(file.transferID)'s file is not one of this batch's")
            }
            // A file put at the name while the batch ran (`OthersFiles`).
            try OthersFiles.refuse(file.dest, of: claim, config: config, database: database)
        }
        var stored: [BatchedProbe] = []
        for (probe, outcome) in zip(written, outcomes) {
            switch outcome {
            case nil: stored.append(probe)
            case let error as HaulError where error.code == .leaseLost:
                Log.warning("planning lease lost before \(store.storing); another worker has it", probe.fields)
            case let error?: planner.planningFailed(probe.claim, error: error)
            }
        }
        return stored + unchanged
    }
}
