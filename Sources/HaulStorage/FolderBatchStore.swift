import CLinux
import Foundation
import HaulCore

/// The small-file batch (`BatchStore`) on a folder: each whole file is written unnamed
/// (`UnnamedFile`; a locked partial file, `PartialFile`, where the file system makes no unnamed
/// files), and the batch publishes them together: their data synced first (one `syncfs` for
/// many), then one check that the leases are still held, then the links (or renames), then
/// their folders.
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

    /// An unnamed file in the destination's folder where the file system makes them, else a
    /// partial file.
    func sink(for file: WholeFile, fence: any BatchFence) throws -> any WholeFileSink {
        let files = try TransferFiles(root: root, relative: file.dest)
        if let unnamed = try UnnamedFile(file, files: files, root: root) { return unnamed }
        return try PartialFile(file, files: files, root: root)
    }

    /// Syncs the files' data, checks once that the batch still holds their leases, publishes
    /// each (asking `refuseOthers` before one replaces what is at its name: a file may have been
    /// put there while the batch ran) and syncs their folders.
    func store(_ sinks: [any WholeFileSink], fence: any BatchFence, refuseOthers: (WholeFile) throws -> Void) throws -> [(any Error)?] {
        let files = sinks.map { $0 as? any FolderWholeFile }
        var outcomes: [(any Error)?] = zip(sinks, files).map { sink, file in
            file == nil ? HaulError(.internal, "transfer \(sink.file.transferID)'s file is not a file of this folder") : nil
        }
        let unsynced = Flush.descriptors(files.compactMap { $0?.descriptor })
        for (index, file) in files.enumerated() {
            if let file, let error = unsynced[file.descriptor] { outcomes[index] = error }
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
                try file.publish(refuseOthers: refuseOthers)
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

/// A whole file of a folder's batch, written where no reader looks until the batch publishes it.
protocol FolderWholeFile: WholeFileSink {
    /// Its destination, and the names of earlier attempts' files beside it.
    var files: TransferFiles { get }
    /// The open file, synced before it is published.
    var descriptor: Int32 { get }
    /// Seals the synced file (`SourceMark.seal`) and puts it at its destination, asking
    /// `refuseOthers` before it replaces anything there, then removes what earlier attempts of
    /// the transfer may have left and closes it (a file that could not be published stays
    /// open, for `discard`).
    func publish(refuseOthers: (WholeFile) throws -> Void) throws
}

/// A whole file written unnamed (`O_TMPFILE`) in its destination's folder and linked into place
/// when the batch publishes it: no name exists before, so there is nothing to lock against
/// another writer, nothing to truncate, nothing for a crash to leave behind. A name that is
/// taken by then is not replaced by the link: what is there is judged (`refuseOthers`), and
/// replaced, if it may be, by a rename.
final class UnnamedFile: FolderWholeFile {
    let file: WholeFile
    let files: TransferFiles
    private let handle: OpenDescriptor
    var descriptor: Int32 { handle.fd }
    /// The destination's folder (the batch's `OpenedRoot` holds it open) and the name in it.
    private let folder: Int32
    private let name: String

    /// - Returns: nil when the file system makes no unnamed files.
    init?(_ file: WholeFile, files: TransferFiles, root: OpenedRoot) throws {
        guard let (fd, folder) = try root.openUnnamed(in: files.destination) else { return nil }
        self.file = file
        self.files = files
        handle = OpenDescriptor(fd)
        self.folder = folder
        name = String(files.destination.lastSlashComponent ?? "")
        SourceMark.write(fd, url: file.url)
    }

    func write(_ bytes: UnsafeRawBufferPointer, completing: Bool) throws {
        try handle.write(bytes, path: files.destination)
    }

    func complete() {}

    func publish(refuseOthers: (WholeFile) throws -> Void) throws {
        SourceMark.seal(descriptor)
        if !link(as: name) {
            guard errno == EEXIST else { throw Errno.storageError(errno, "link the new file as \(files.destination)") }
            try refuseOthers(file)
            try replace()
        }
        files.removeTemporaries(generation: file.generation)
        handle.close()
    }

    /// Puts the file at its taken name: linked under a random name of its own beside it
    /// (`NAME.haul-link-…`, which only a crash between the two calls leaves behind), then renamed
    /// over what is there (atomically: a reader sees the old file or the new one).
    private func replace() throws {
        try SpecialFile.refuse(files.destination, hint: SpecialFile.downloadHint)
        let temporary = name + ".haul-link-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        guard link(as: temporary) else {
            throw Errno.storageError(errno, "link the new file beside \(files.destination)")
        }
        guard renameat(folder, temporary, folder, name) == 0 else {
            let error = Errno.storageError(errno, "rename the new file to \(files.destination)")
            unlinkat(folder, temporary, 0)
            throw error
        }
    }

    /// Links the file as `name` in its folder. - Returns: false, with `errno` set, when it could not.
    private func link(as name: String) -> Bool {
        if haul_link_unnamed(descriptor, folder, name) == 0 { return true }
        return errno == ENOENT && haul_link_unnamed_through_proc(descriptor, folder, name) == 0
    }

    func discard() {
        handle.close()
    }
}

/// A whole file being written to its partial file, renamed into place once the batch publishes it.
/// The file is open and locked (`PartialLock`) from its creation until then, so that no other
/// process writes it meanwhile.
final class PartialFile: FolderWholeFile {
    let file: WholeFile
    let files: TransferFiles
    /// The partial file's path.
    let path: String
    private let handle: OpenDescriptor
    var descriptor: Int32 { handle.fd }

    init(_ file: WholeFile, files: TransferFiles, root: OpenedRoot) throws {
        self.file = file
        self.files = files
        path = files.partial(generation: file.generation)
        guard let locked = try root.openLocked(path, O_WRONLY | O_CREAT, doing: "create") else { throw files.busy }
        handle = OpenDescriptor(locked)
        // What an earlier attempt left goes only now, under the lock: another writer's file is never cut.
        guard ftruncate(locked, 0) == 0 else {
            defer { handle.close() }
            throw Errno.storageError(errno, "truncate \(path)")
        }
        // Marked before its first byte: a download of another URL that kept bytes in a partial
        // file of this name sees it was overwritten (`TransferFiles.confirmPartial`).
        SourceMark.write(locked, url: file.url)
    }

    func write(_ bytes: UnsafeRawBufferPointer, completing: Bool) throws {
        try handle.write(bytes, path: path)
    }

    /// Nothing to ready: the file carries its mark since it was made, and stays open, holding its
    /// lock, until the batch syncs and publishes it.
    func complete() {}

    /// Renames the file into place (replacing an earlier version atomically); it stays locked
    /// until then.
    func publish(refuseOthers: (WholeFile) throws -> Void) throws {
        try refuseOthers(file)
        SourceMark.seal(descriptor)
        try Assembler.place(path, as: files, generation: file.generation)
        handle.close()
    }

    /// Removes the partial file, still holding its lock: no other writer can have taken the name
    /// meanwhile (a published file's name is no longer its own).
    func discard() {
        if handle.isOpen { unlink(path) }
        handle.close()
    }
}

/// The descriptor of a batch's file, closed once: when the file is published or discarded, or
/// at the latest when its sink goes.
private final class OpenDescriptor {
    /// The descriptor, -1 once closed.
    private(set) var fd: Int32

    init(_ fd: Int32) { self.fd = fd }

    deinit { close() }

    var isOpen: Bool { fd >= 0 }

    /// Writes all of `bytes` (to the file at `path`, for the error).
    func write(_ bytes: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            guard written > 0 else { throw Errno.storageError(errno, "write \(path)") }
            offset += written
        }
    }

    func close() {
        if fd >= 0 {
            Foundation.close(fd)
            fd = -1
        }
    }
}
