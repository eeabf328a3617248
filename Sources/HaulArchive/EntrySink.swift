import Glibc
import HaulCore

/// Where an extraction puts its entries: the staging directory of `Extractor.extract(archive:to:)` on
/// local disk, or any other store through `Extractor.extract(archive:into:limits:)` (an S3 bucket).
///
/// Every path handed to a sink is already normalised by the hostile-archive rules: relative, without
/// `.`/`..` components or empty segments, and no entry appears twice. A sink is used by the extracting
/// thread and, for zip files, by up to `concurrency` threads at once calling `createFile`.
public protocol EntrySink: AnyObject, Sendable {
    /// How many files may be written at once (zip entries are inflated in parallel).
    var concurrency: Int { get }
    /// Whether a gap left between writes stays a hole that takes no space (a file on disk); otherwise
    /// it is written out as zeros, and a sparse entry's holes count against the size limit.
    var keepsHoles: Bool { get }
    /// A directory entry, or the parent of a file about to be created; a sink without directories
    /// only checks that no file stands where the directory would be.
    func makeDirectory(_ path: String, modificationTime: Int64?) throws
    /// Starts a new regular file. `sizeBound` is its size when the archive declares it, otherwise the
    /// most it may grow to under the extraction's limits.
    func createFile(_ path: String, sizeBound: Int64, executable: Bool, modificationTime: Int64) throws -> any EntryWriter
    /// Creates a symlink (only reached with `allowSymlinks`), after every file, or refuses it.
    func createSymlink(_ path: String, target: String) throws
}

/// The bytes of one file entry, written by one thread.
public protocol EntryWriter: AnyObject {
    /// Writes `bytes` at `offset`, which never lies before the end of what was written; a gap is a hole (zeros).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws
    /// Completes the file at `size` bytes (past the last write: a trailing hole).
    func finish(size: Int64) throws
    /// Gives the file up after an error; the sink's owner removes what was already written.
    func abort()
}

/// Staging is only shared with zip threads for `createFile`, which reads only constants (its root and the root's descriptor).
extension Staging: @unchecked Sendable {}

extension Staging: EntrySink {
    var concurrency: Int { workerCount }
    var keepsHoles: Bool { true }

    func createFile(_ path: String, sizeBound: Int64, executable: Bool, modificationTime: Int64) throws -> any EntryWriter {
        let full = self.path(path)
        return StagedFile(fd: try createFile(path), path: full, executable: executable, modificationTime: modificationTime)
    }

    func createSymlink(_ path: String, target: String) throws {
        try SymlinkGuard.create(path, target: target, in: self)
    }
}

/// A file in the staging directory; holes of a sparse entry stay holes.
final class StagedFile: EntryWriter {
    private let fd: Int32
    private let path: String
    private let executable: Bool
    private let modificationTime: Int64
    private var end: Int64 = 0

    init(fd: Int32, path: String, executable: Bool, modificationTime: Int64) {
        self.fd = fd
        self.path = path
        self.executable = executable
        self.modificationTime = modificationTime
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        if offset == end {
            try writeAll(fd, bytes.baseAddress!, bytes.count, path: path)
        } else {
            try pwriteAll(fd, bytes.baseAddress!, bytes.count, at: offset, path: path)
        }
        end = offset + Int64(bytes.count)
    }

    func finish(size: Int64) throws {
        if size != end {
            do { _ = try check("set the size of", path) { ftruncate(fd, off_t(size)) } } catch {
                close(fd)
                throw error
            }
        }
        try Staging.finishFile(fd, path, executable: executable, modificationTime: modificationTime)
    }

    func abort() { close(fd) }
}
