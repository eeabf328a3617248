import CLinux
import Foundation
import HaulCore

/// The finalizer's file work: build the finished file, verify it, and publish it atomically.
public enum Assembler {
    /// One piece of the result: `length` bytes of the file at `path`, which belong at `offset`.
    public struct Piece: Sendable {
        public let path: String
        public let offset: Int64
        public let length: Int64

        public init(path: String, offset: Int64, length: Int64) {
            self.path = path
            self.offset = offset
            self.length = length
        }
    }

    /// Bytes between calls of a long operation's `keepAlive` (which renews the caller's lease).
    static let keepAliveEvery: Int64 = 256 << 20

    /// Concatenates the recorded parts into `target` with `copy_file_range`; refuses gaps and
    /// overlaps. `keepAlive` runs every 256 MiB and may throw to abort.
    /// Every file is opened beneath `root`, never through a symlink.
    public static func concatenate(_ pieces: [Piece], into target: String, root: StorageRoot, keepAlive: () throws -> Void) throws {
        var expected: Int64 = 0
        for piece in pieces {
            guard piece.offset == expected else {
                throw HaulError(
                    .partsGap, "recorded parts do not cover the file: a part starts at byte \(piece.offset) but \(expected) was expected",
                    hint: "run 'haul retry' to fetch the missing bytes", transient: false)
            }
            expected += piece.length
        }
        unlink(target)
        let out = try root.openFile(target, O_WRONLY | O_CREAT | O_TRUNC, doing: "create")
        defer { close(out) }
        var outOffset: Int64 = 0
        for piece in pieces where piece.length > 0 {
            let input = try root.openFile(piece.path, O_RDONLY, doing: "open part")
            defer { close(input) }
            var inOffset: Int64 = 0
            while inOffset < piece.length {
                var source = inOffset
                var target = outOffset
                let copied = copy_file_range(input, &source, out, &target, Int(piece.length - inOffset), 0)
                if copied < 0 { throw Errno.storageError(errno, "copy part \(piece.path)") }
                if copied == 0 {
                    throw HaulError(.partsShort, "part \(piece.path) holds fewer bytes than were recorded", hint: "run 'haul retry' to fetch them again")
                }
                if (outOffset + Int64(copied)) / keepAliveEvery != outOffset / keepAliveEvery { try keepAlive() }
                inOffset += Int64(copied)
                outOffset += Int64(copied)
            }
        }
        guard fdatasync(out) == 0 else { throw Errno.storageError(errno, "sync \(target)") }
    }

    /// Cuts the file at `path` (beneath `root`, never through a symlink) to `size` bytes (an
    /// unknown-length body retried from its start may have left more).
    public static func truncate(_ path: String, to size: Int64, root: StorageRoot) throws {
        let fd = try root.openFile(path, O_WRONLY, doing: "truncate")
        defer { close(fd) }
        guard ftruncate(fd, off_t(size)) == 0 else { throw Errno.storageError(errno, "truncate \(path)") }
    }

    /// The size of the file at `path`, or `nil` if it does not exist.
    public static func size(of path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Reads the file once and computes its digest; `keepAlive` runs every 256 MiB and may throw to abort.
    /// The file is opened beneath `root`, never through a symlink.
    public static func digest(of path: String, algorithm: Checksum.Algorithm, root: StorageRoot, keepAlive: () throws -> Void = {}) throws -> Checksum {
        let fd = try root.openFile(path, O_RDONLY, doing: "read")
        defer { close(fd) }
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        let digester = Digester(algorithm)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw Errno.storageError(errno, "read \(path)")
            }
            if count == 0 { break }
            digester.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            if (total + Int64(count)) / keepAliveEvery != total / keepAliveEvery { try keepAlive() }
            total += Int64(count)
        }
        return digester.finish()
    }

    /// Marks the finished file at `source` as downloaded from `url` and seals it (`SourceMark`),
    /// renames it to its destination and syncs the folder, atomically replacing any earlier
    /// version. Removes the generation's parts afterwards. A symlink planted where `source`
    /// should be is refused, never published; so is a destination that is a device, a FIFO or a
    /// socket (`SpecialFile`).
    public static func publish(_ source: String, from url: String, as files: TransferFiles, generation: Int) throws {
        try SpecialFile.refuse(files.destination, hint: SpecialFile.downloadHint)
        let fd = try files.root.openFile(source, O_RDONLY, doing: "publish")
        SourceMark.write(fd, url: url)
        SourceMark.seal(fd)
        fsync(fd)
        close(fd)
        guard rename(source, files.destination) == 0 else { throw Errno.storageError(errno, "rename \(source) to \(files.destination)") }
        let folder = open(files.destination.parentFolder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
        files.removeTemporaries(generation: generation, renamed: source)
    }

    /// Renames a finished file whose bytes (and folder) the caller makes durable itself, such as
    /// a batch of small files flushed with one `syncfs`, atomically replacing any earlier
    /// version (never a device, FIFO or socket); then removes the generation's leftovers.
    public static func place(_ source: String, as files: TransferFiles, generation: Int) throws {
        try SpecialFile.refuse(files.destination, hint: SpecialFile.downloadHint)
        guard rename(source, files.destination) == 0 else { throw Errno.storageError(errno, "rename \(source) to \(files.destination)") }
        files.removeTemporaries(generation: generation, renamed: source)
    }
}
