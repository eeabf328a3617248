import Foundation
import HaulCore
import HaulQueue
import HaulStorage

/// `BatchProbe` on a POSIX storage root: a whole file is written to its partial file, and the
/// batch publishes them together: data synced first, then (still holding the leases) the
/// renames, then their folders.
struct FileBatchStorage: BatchStorage {
    /// The storage root, held open for this batch.
    let root: OpenedRoot
    let database: ResilientConnection
    let config: WorkerConfig

    /// The largest file a batch finishes itself; bigger ones go to the fetchers and their checkpoints.
    static let wholeFileLimit: Int64 = 16 << 20

    var noun: String { "file" }
    var storing: String { "publishing" }
    /// A `stat` is no round trip: one at a time.
    var lookupWidth: Int { 1 }

    func takesWhole(size: Int64) -> Bool {
        size <= Self.wholeFileLimit
    }

    /// A `stat` per file: the names are on this host.
    func lookUp(_ claims: [TransferLeases.Claim]) -> [Int64?] {
        claims.map { Planner.fileOnStorage($0.info, config: config) }
    }

    func refuseOthers(_ dest: String, of claim: TransferLeases.Claim) throws {
        try OthersFiles.refuse(dest, of: claim, config: config, database: database)
    }

    /// A `stat`: the file's own publish checks the name again (`store`).
    func occupant(of dest: String, for claim: TransferLeases.Claim) throws -> Occupant? {
        try config.backend.occupant(of: dest, url: claim.info.url)
    }

    /// A partial file another process holds locked is retried later on a fleet worker, not
    /// failed; a `haul get` is refused at once (`LockedPartial`).
    func sink(for plan: TransferLeases.Plan, of claim: TransferLeases.Claim) throws -> PartialFile {
        do {
            return try PartialFile(root: root, relative: plan.dest, generation: claim.generation, url: claim.info.url)
        } catch {
            throw LockedPartial.asMet(error, scope: config.scope)
        }
    }

    /// Publishes the files the batch fetched whole: syncs them, checks that their leases are
    /// still held, renames them into place and syncs their folders.
    func store(_ whole: [BatchedProbe<Self>], unchanged: [BatchedProbe<Self>], planner: Planner) throws -> [BatchedProbe<Self>] {
        let config = config
        var fetched = whole
        let unsynced = Flush.paths(fetched.compactMap { $0.sink?.path })
        fetched.removeAll { probe in
            guard let error = probe.sink.flatMap({ unsynced[ExactText($0.path)] }) else { return false }
            probe.discard()
            planner.planningFailed(probe.claim, error: error)
            return true
        }
        let held = try database.run(patient: true) { conn in
            try TransferLeases(conn, workerID: config.workerID).held(fetched.map { $0.claim } + unchanged.map { $0.claim })
        }
        fetched.removeAll { probe in
            guard held.contains(probe.claim.info.id) else {
                probe.discard()
                Log.warning("planning lease lost before publishing; another worker has it", probe.fields)
                return true
            }
            do {
                guard let sink = probe.sink, let dest = probe.plan?.dest else {
                    throw HaulError(.`internal`, "transfer \(probe.claim.info.id) was published before it was written")
                }
                // A file put at the name while the batch ran (`OthersFiles`).
                try OthersFiles.refuse(dest, of: probe.claim, config: config, database: database)
                try sink.publish()
                return false
            } catch {
                probe.discard()
                planner.planningFailed(probe.claim, error: error)
                return true
            }
        }
        let folders = fetched.compactMap { $0.sink.map { sink in sink.files.destination.parentFolder } }
        for (folder, error) in Flush.paths(folders) {
            Log.warning("could not sync a folder; a crash may lose its new names", [("folder", folder.text), ("error", error.description)])
        }
        return fetched + unchanged.filter { held.contains($0.claim.info.id) }
    }
}

/// A whole file being written to its partial file, renamed into place once the batch publishes it.
/// The file is open and locked (`PartialLock`) from its creation until then, so that no other
/// process writes it meanwhile.
final class PartialFile: WholeFileSink {
    let files: TransferFiles
    let generation: Int
    /// The partial file's path.
    let path: String
    private var descriptor: Int32

    init(root: OpenedRoot, relative: String, generation: Int, url: String) throws {
        files = try TransferFiles(root: root, relative: relative)
        self.generation = generation
        path = files.partial(generation: generation)
        guard let locked = try root.openLocked(path, O_WRONLY | O_CREAT, doing: "create") else { throw files.busy }
        descriptor = locked
        // What an earlier attempt left goes only now, under the lock: another writer's file is never cut.
        guard ftruncate(locked, 0) == 0 else {
            defer { closeDescriptor() }
            throw Errno.storageError(errno, "truncate \(path)")
        }
        // Marked before its first byte: a download of another URL that kept bytes in a partial
        // file of this name sees it was overwritten (`TransferFiles.confirmPartial`).
        SourceMark.write(locked, url: url)
    }

    func write(_ bytes: UnsafeRawBufferPointer, completing: Bool) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            guard written > 0 else { throw Errno.storageError(errno, "write \(path)") }
            offset += written
        }
    }

    /// Nothing to ready: the file carries its mark since it was made, and stays open, holding its
    /// lock, until the batch syncs and publishes it.
    func complete() {}

    /// Seals the synced file (`SourceMark.seal`), renames it into place (replacing an earlier
    /// version atomically), removes what earlier attempts of this transfer may have left, and
    /// closes it (a file that could not be published stays open, and locked, for `discard`).
    func publish() throws {
        SourceMark.seal(descriptor)
        try Assembler.place(path, as: files, generation: generation)
        closeDescriptor()
    }

    /// Removes the partial file, still holding its lock: no other writer can have taken the name
    /// meanwhile (a published file's name is no longer its own).
    func discard() {
        if descriptor >= 0 { unlink(path) }
        closeDescriptor()
    }

    deinit {
        closeDescriptor()
    }

    private func closeDescriptor() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
    }
}
