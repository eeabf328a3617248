import Foundation
import HaulCore

/// `mkdir -p` with `mkdir(2)`, so a failure carries the real `errno` (full disk, read-only,
/// permission) as a storage error rather than a Foundation error text.
public enum Directories {
    /// Creates `path` and any missing parents (mode 0777 less the umask).
    public static func create(_ path: String) throws {
        var existing = stat()
        if stat(path, &existing) == 0 {
            guard existing.st_mode & S_IFMT == S_IFDIR else {
                throw HaulError(.storage, "cannot create directory \(path): something that is not a directory is there", hint: Errno.fileInTheWay)
            }
            return
        }
        let parent = path.parentFolder
        if !parent.isEmpty, parent != path { try create(parent) }
        if mkdir(path, 0o777) != 0 && errno != EEXIST {
            throw Errno.storageError(errno, "create directory \(path)")
        }
    }
}
