import CLinux
import Foundation
import HaulCore
import Synchronization

/// The process's private scratch folder: a fresh directory with an unpredictable name, made by
/// `mkdtemp` (mode 0700) under `$TMPDIR`, and held open by its descriptor. Its files are unnamed
/// (`O_TMPFILE`, else a random name unlinked at once) and used through their descriptors only,
/// never opened again by path, so another local user can neither pre-create the folder, swap a
/// file in it nor plant a symlink for haul to write through. The folder goes when the process exits.
public final class ScratchFolder: Sendable {
    /// Where the folder is (for log lines; nothing is opened by it).
    public let path: String
    /// The open folder, for `*at` calls.
    public let descriptor: Int32

    /// Makes a new folder `PREFIX-XXXXXX` in `parent` (`$TMPDIR` by default).
    /// - Throws: `io` when it cannot be made.
    public init(prefix: String, in parent: String = NSTemporaryDirectory()) throws {
        let base = parent.hasSuffix("/") ? parent : parent + "/"
        var template = Array((base + prefix + "-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HaulError(
                .storage, "cannot create a scratch folder in \(parent): \(String(cString: strerror(errno)))", hint: "set TMPDIR to a folder you can write")
        }
        let path = String(cString: made)
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            rmdir(path)
            throw HaulError(.storage, "cannot open the scratch folder \(path): \(String(cString: strerror(code)))")
        }
        self.path = path
        descriptor = fd
        Self.removeAtExit(path)
    }

    /// A new unnamed file in the folder, open for reading and writing; the caller closes it.
    public func unnamedFile() throws -> Int32 {
        var fd = openat(descriptor, ".", HAUL_O_TMPFILE_BIT | O_DIRECTORY | O_RDWR | O_CLOEXEC, 0o600)
        if fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
            let name = ".haul-scratch-\(UInt64.random(in: 0...UInt64.max))"
            fd = openat(descriptor, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 { unlinkat(descriptor, name, 0) }
        }
        guard fd >= 0 else { throw HaulError(.storage, "cannot create a file in the scratch folder \(path): \(String(cString: strerror(errno)))") }
        return fd
    }

    /// The folders this process made, removed by `atexit` (they hold no names: their files are unnamed).
    private static let made = Mutex<[String]>([])

    private static func removeAtExit(_ path: String) {
        let first = made.withLock { made in
            made.append(path)
            return made.count == 1
        }
        if first { atexit { for path in ScratchFolder.made.withLock({ $0 }) { rmdir(path) } } }
    }
}
