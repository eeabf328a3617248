import CLinux
import Glibc
import HaulCore

/// How `ZipWriter` compresses file data.
public struct ZipWriteOptions: Sendable, Equatable {
    /// Compression for every file entry.
    public enum Compression: Sendable, Equatable {
        /// Method 0: no compression.
        case store
        /// Method 8 at zlib level 1 (fastest) ... 9 (smallest); files deflate cannot shrink are stored.
        case deflate(level: Int)
    }

    /// The compression; the default is deflate at level 6, like `zip`.
    public var compression: Compression
    /// Whether an existing file of the archive's name is replaced; by default it is left as it
    /// was and the archive refused (`destination-exists`).
    public var replace: Bool

    /// Creates options; `deflate(level: 6)` and no replacing unless told otherwise.
    public init(compression: Compression = .deflate(level: 6), replace: Bool = false) {
        self.compression = compression
        self.replace = replace
    }
}

/// What `ZipWriter.create` wrote, for printing.
public struct ZipWriteSummary: Sendable, Equatable {
    /// Files, directories and symlinks stored.
    public var entries = 0
    /// Regular files stored.
    public var files = 0
    /// Bytes of file content before compression.
    public var bytes: Int64 = 0
    /// Size of the finished archive in bytes.
    public var archiveBytes: Int64 = 0
}

/// Creates zip archives from files and directories on disk.
public enum ZipWriter {
    /// Creates `archive` from `inputs`, like `zip -r`: a directory adds its contents relative to itself
    /// (empty directories kept), a file adds itself under its base name, symlinks inside a directory are
    /// stored as symlinks (like `zip -y`).
    ///
    /// Names are UTF-8 (flag bit 11), Unix modes go in the external attributes, modification times in the
    /// extended-timestamp field; ZIP64 records are used automatically past 4 GiB or 65 535 entries.
    /// Files are deflated on up to eight threads of its own and streamed with bounded memory. The archive is
    /// written under a temporary name in the same directory and renamed at the end, so a failure leaves
    /// nothing half-written. Unless `options.replace`, a file already at `archive` is never replaced: it is
    /// refused before any work, and the final rename will not replace one that appeared meanwhile.
    /// Blocks the calling thread; prints nothing.
    ///
    /// - Throws: `HaulError`: `usage` for a bad level or no inputs, `destination-exists` for an existing
    ///   archive (unless `options.replace`), `duplicate-entry` when two inputs map to one name,
    ///   `io-error` for unreadable inputs or a full disk.
    public static func create(archive: String, inputs: [String], options: ZipWriteOptions = ZipWriteOptions()) throws -> ZipWriteSummary {
        guard !inputs.isEmpty else { throw HaulError.usage("haul zip needs at least one file or directory to add") }
        var level: Int32?
        if case .deflate(let value) = options.compression {
            guard (1...9).contains(value) else { throw HaulError.usage("compression level \(value) is not between 1 and 9") }
            level = Int32(value)
        }
        try SpecialFile.refuse(archive, hint: "choose a file name for OUT.zip")
        var existing = stat()
        if !options.replace && lstat(archive, &existing) == 0 { throw Self.exists(archive) }
        let directory = archive.parentFolder
        let base = archive.lastSlashComponent.map(String.init) ?? archive
        var template = Array("\(directory)/.\(base).haul-tmp-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw HaulError.archiveIO("create a temporary file in", directory, errno: errno) }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        do {
            defer { close(fd) }
            var info = stat()
            fstat(fd, &info)
            fchmod(fd, FileMode.file())
            var skipping = [FileIdentity(info)]
            if stat(archive, &info) == 0 { skipping.append(FileIdentity(info)) }
            let entries = try InputWalker.collect(inputs, skipping: skipping)
            let output = ArchiveOutput(path: temporary, descriptor: fd)
            var summary = try ZipArchiveBuilder(output: output, level: level, spoolDirectory: directory).write(entries)
            try check("sync", temporary) { fsync(fd) }
            try publish(temporary, as: archive, replace: options.replace)
            summary.archiveBytes = Int64(output.offset)
            return summary
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Renames the finished `temporary` to `archive`; without `replace`, only if nothing is there:
    /// `renameat2` with `RENAME_NOREPLACE`, else a hard link (NFS has no `RENAME_NOREPLACE`), else
    /// (a file system with neither, as some FUSE ones) a look just before a plain rename.
    private static func publish(_ temporary: String, as archive: String, replace: Bool) throws {
        guard !replace else {
            try check("rename the finished archive to", archive) { rename(temporary, archive) }
            return
        }
        while true {
            var result = haul_rename_noreplace(temporary, archive)
            if result != 0 && errno == EINVAL {
                result = link(temporary, archive)
                if result == 0 {
                    unlink(temporary)
                } else if [EPERM, EOPNOTSUPP, ENOSYS].contains(errno) {
                    var existing = stat()
                    if lstat(archive, &existing) == 0 { throw exists(archive) }
                    result = rename(temporary, archive)
                }
            }
            if result == 0 { return }
            let code = errno
            guard code != EINTR else { continue }
            throw code == EEXIST ? exists(archive) : HaulError.archiveIO("rename the finished archive to", archive, errno: code)
        }
    }

    private static func exists(_ archive: String) -> HaulError {
        HaulError(
            .destinationExists, "'\(archive)' already exists; haul zip left it as it was",
            hint: "pass --force to replace it, or choose another OUT.zip")
    }
}
