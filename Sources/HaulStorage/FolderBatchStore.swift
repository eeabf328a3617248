import Foundation
import HaulCore

/// The small-file batch (`BatchStore`) on a folder: each whole file is written to its partial
/// file, and the batch publishes them together: their data synced first (one `syncfs` for
/// many), then one check that the leases are still held, then the renames, then their folders.
struct FolderBatchStore: BatchStore {
    let storage: FolderStorage
    /// The storage root, held open for this batch.
    let root: OpenedRoot

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
    func lookUp(_ files: [(id: Int64, dest: String?)]) -> [Int64?] {
        files.map { file in file.dest.flatMap { (try? storage.probe($0))??.size } }
    }

    /// What is at `dest` now: a folder keeps no answer of its lookup, as a `stat` costs no
    /// round trip, and every rename asks `refuseOthers` again (`store`).
    func seen(_ dest: String, of id: Int64, url: String) throws -> Occupant? {
        try storage.occupant(of: dest, url: url)
    }

    func occupant(of dest: String, for id: Int64, url: String) throws -> Occupant? {
        try storage.occupant(of: dest, url: url)
    }

    func sink(for file: WholeFile, fence: any BatchFence) throws -> any WholeFileSink {
        try PartialFile(file, root: root)
    }

    /// Syncs the files' data, checks once that the batch still holds their leases, asks
    /// `refuseOthers` of each (a file may have been put at its name while the batch ran), renames
    /// each into place and syncs their folders.
    func store(_ sinks: [any WholeFileSink], fence: any BatchFence, refuseOthers: (WholeFile) throws -> Void) throws -> [(any Error)?] {
        let files = sinks.map { $0 as? PartialFile }
        let unsynced = Flush.paths(files.compactMap { $0?.path })
        var outcomes: [(any Error)?] = zip(sinks, files).map { sink, file in
            guard let file else { return HaulError(.internal, "transfer \(sink.file.transferID)'s file is not a partial file of this folder") }
            return unsynced[ExactText(file.path)]
        }
        let synced = files.indices.filter { outcomes[$0] == nil }
        let held = try fence.heldNow(synced.map { sinks[$0].file.transferID })
        var published: [String] = []
        for index in synced {
            guard let file = files[index] else { continue }
            do {
                guard held.contains(file.file.transferID) else {
                    throw HaulError(.leaseLost, "another worker holds transfer \(file.file.transferID) now")
                }
                try refuseOthers(file.file)
                try file.publish()
                published.append(file.files.destination.parentFolder)
            } catch {
                outcomes[index] = error
            }
        }
        for (index, outcome) in outcomes.enumerated() where outcome != nil { sinks[index].discard() }
        for (folder, error) in Flush.paths(published) {
            Log.warning("could not sync a folder; a crash may lose its new names", [("folder", folder.text), ("error", error.description)])
        }
        return outcomes
    }
}

/// A whole file being written to its partial file, renamed into place once the batch publishes it.
/// The file is open and locked (`PartialLock`) from its creation until then, so that no other
/// process writes it meanwhile.
final class PartialFile: WholeFileSink {
    let file: WholeFile
    let files: TransferFiles
    /// The partial file's path.
    let path: String
    private var descriptor: Int32

    init(_ file: WholeFile, root: OpenedRoot) throws {
        self.file = file
        files = try TransferFiles(root: root, relative: file.dest)
        path = files.partial(generation: file.generation)
        guard let locked = try root.openLocked(path, O_WRONLY | O_CREAT, doing: "create") else { throw files.busy }
        descriptor = locked
        // What an earlier attempt left goes only now, under the lock: another writer's file is never cut.
        guard ftruncate(locked, 0) == 0 else {
            defer { closeDescriptor() }
            throw Errno.storageError(errno, "truncate \(path)")
        }
        // Marked before its first byte: a download of another URL that kept bytes in a partial
        // file of this name sees it was overwritten (`TransferFiles.confirmPartial`).
        SourceMark.write(locked, url: file.url)
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
        try Assembler.place(path, as: files, generation: file.generation)
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
