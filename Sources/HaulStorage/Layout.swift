import Foundation
import HaulCore

/// Where a transfer's bytes live while it downloads, for both storage layouts (docs/ARCHITECTURE.md "Storage layouts").
public struct TransferFiles: Sendable {
    /// The final file's absolute path.
    public let destination: String
    /// The storage root every file is opened beneath.
    public let root: StorageRoot
    /// `inplace`: the full-size file every segment writes into at its offset. A transfer that
    /// started over (generation > 0) gets a new file, so a late writer of the old version
    /// can never touch the new one.
    public func partial(generation: Int) -> String {
        generation == 0 ? destination + ".haul-partial" : destination + ".haul-partial.\(generation)"
    }

    /// Where the parts layout assembles the file before publishing it: a name of this finalizer
    /// lease's own, so a finalizer that lost its lease can never rename another one's work.
    public func assembly(generation: Int, lease: String) -> String {
        partsDirectory + "/assembly-g\(generation)-\(lease.prefix(8))"
    }
    /// `parts`: the folder of per-attempt part files.
    public var partsDirectory: String { destination + ".haul-parts" }

    /// Paths for `relative` under `root`, creating parent folders safely.
    public init(root: StorageRoot, relative: String) throws {
        destination = try root.prepare(relative)
        self.root = root
    }

    /// Paths for `relative` under a root held open for a batch, creating parent folders safely.
    public init(root opened: OpenedRoot, relative: String) throws {
        destination = try opened.prepare(relative)
        self.root = opened.root
    }

    /// The part file of one attempt at one segment, relative to the storage root.
    public static func partName(relativeDest: String, generation: Int, index: Int, lease: String) -> String {
        "\(relativeDest).haul-parts/g\(generation)-s\(index)-\(lease.prefix(8))"
    }

    /// Creates (or reuses) the partial file at its full size, marked as downloaded from `url`
    /// (`SourceMark`). Reuse keeps earlier attempts' bytes.
    /// The file is locked against other writers while it is sized (`PartialLock`); with
    /// `holding`, the lock is kept there until the file is published (a `haul get`'s file,
    /// written by this process only), and a lock already kept there is used.
    /// - Throws: `destination-busy` when another process writes the file.
    public func preparePartial(size: Int64?, generation: Int, url: String, holding: HeldPartials? = nil) throws {
        if generation > 0 {
            unlink(partial(generation: generation - 1))
            holding?.release(partial(generation: generation - 1))
        }
        let partial = partial(generation: generation)
        let create = { try self.openPartial(partial, O_WRONLY | O_CREAT, doing: "create") }
        let fd = try holding.map { try $0.descriptor(of: partial, orOpen: create) } ?? create()
        defer { if holding == nil { close(fd) } }
        SourceMark.write(fd, url: url)
        guard let size, size > 0 else { return }
        var info = stat()
        fstat(fd, &info)
        if Int64(info.st_size) == size { return }
        // In memory the size is set sparse: pages come as the bytes do (`MemoryFileSystem`).
        let result = MemoryFileSystem.contains(fd) ? EOPNOTSUPP : posix_fallocate(fd, 0, off_t(size))
        if result != 0 && result != EOPNOTSUPP && result != EINVAL { throw Errno.storageError(result, "reserve \(size) bytes for \(partial)") }
        if result != 0, ftruncate(fd, off_t(size)) != 0 { throw Errno.storageError(errno, "size \(partial)") }
    }

    /// Locks the partial file of `generation`, which earlier attempts made, in `holding` until it
    /// is published, unless it is held there already: a `haul get` that resumes a file writes it
    /// under the lock as the get that planned it did.
    /// - Throws: `destination-busy` when another process writes the file.
    /// - Throws: `partial-missing` when the file is gone.
    public func holdPartial(generation: Int, in holding: HeldPartials) throws {
        let partial = partial(generation: generation)
        _ = try holding.descriptor(of: partial) {
            do {
                return try openPartial(partial, O_WRONLY, doing: "open")
            } catch {
                var attributes = stat()
                if lstat(partial, &attributes) != 0 && errno == ENOENT { throw Self.partialGone(partial) }
                throw error
            }
        }
    }

    /// Checks, before a download writes into (or publishes) the partial file of `generation`
    /// that its planner made, that no download of another URL wrote the file meanwhile: one
    /// saving the same name, recorded in another database (two `haul get`s with different
    /// `DATABASE_URL`s), which this transfer's history cannot show. Its segments done would
    /// then hold the other file's bytes.
    /// - Throws: `partial-overwritten` when the file carries another URL's mark; the worker
    ///   starts the transfer over (`StartingOver`).
    public func confirmPartial(generation: Int, url: String) throws {
        let partial = partial(generation: generation)
        guard SourceMark.read(partial, against: url) == .anotherURL else { return }
        throw HaulError(
            .partialOverwritten, "the partial file \(partial) was written by a download of another URL since this one stopped",
            hint: "the transfer starts over; give the two downloads different names (-o FILE, --dest)", transient: true)
    }

    /// The error of a resumed download whose partial file is gone: the worker starts the
    /// transfer over (`TransferLeases.downloadLost`, through `StartingOver`).
    public static func partialGone(_ path: String) -> HaulError {
        HaulError(.partialMissing, "the partial file \(path) is gone", hint: "it was removed or the transfer started over", transient: true)
    }

    /// `root.openLocked`, throwing `busy` when another writer holds the file.
    private func openPartial(_ partial: String, _ flags: Int32, doing: String) throws -> Int32 {
        guard let fd = try root.openLocked(partial, flags, doing: doing) else { throw busy }
        return fd
    }

    /// The refusal of a partial file another process is writing: `destination-busy` of kind
    /// `partialLocked`.
    public var busy: HaulError {
        var error = HaulError(
            .destinationBusy, "another haul process is saving \(destination) right now",
            hint: "wait for it to finish, or save this URL under another name (-o FILE, --dest)")
        error.kind = .partialLocked
        return error
    }

    /// The partial files of generations 0 through `generation` that a writer holds (`PartialLock`).
    public func partialsHeld(generation: Int) -> [String] {
        (0...max(0, generation)).map { partial(generation: $0) }.filter(PartialLock.isHeld)
    }

    /// Removes the partial files and parts of generations 0 through `generation` (a transfer
    /// that started over leaves an older generation's behind; a newer one is never touched).
    /// A partial file another writer holds (`PartialLock`) is left alone: it is another
    /// download's, under a name this transfer was refused (`busy`).
    /// - Parameters:
    ///   - renamed: a partial file just renamed into place, which is not looked for.
    ///   - holding: this process's locks, given up first (its own download is the one removed).
    /// - Returns: the partial files left to the writer that holds them.
    @discardableResult
    public func removeTemporaries(generation: Int, renamed: String? = nil, holding: HeldPartials? = nil) -> [String] {
        var left: [String] = []
        for old in 0...max(0, generation) where partial(generation: old) != renamed {
            let path = partial(generation: old)
            holding?.release(path)
            switch PartialLock.presence(at: path) {
            case .absent: break
            case .held: left.append(path)
            case .unheld: unlink(path)
            }
        }
        var folder = stat()
        guard stat(partsDirectory, &folder) == 0 else { return left }  // the common case: no parts were ever written
        let parts = (try? FileManager.default.contentsOfDirectory(atPath: partsDirectory)) ?? []
        for part in parts where Self.generation(ofPart: part).map({ $0 <= generation }) ?? false {
            unlink(partsDirectory + "/" + part)
        }
        rmdir(partsDirectory)
        return left
    }

    /// The generation a part or assembly file name (`g3-s0-…`, `assembly-g3-…`) belongs to.
    static func generation(ofPart name: String) -> Int? {
        let rest = name.hasPrefix("assembly-") ? name.dropFirst("assembly-".count) : Substring(name)
        guard rest.hasPrefix("g") else { return nil }
        return Int(rest.dropFirst().prefix { $0.isNumber })
    }

}
