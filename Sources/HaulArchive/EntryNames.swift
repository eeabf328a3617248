import HaulCore
import Synchronization

/// The names an extraction has claimed, for a sink without a file system to refuse what a
/// directory would: a file where a directory is, a file inside a file, the same file twice.
/// Shared by the threads writing zip entries.
public final class EntryNames: Sendable {
    private let claimed = Mutex<(files: Set<String>, directories: Set<String>)>(([], []))

    /// No names claimed yet.
    public init() {}

    /// Claims a directory and its ancestors; refuses one where a file is (`duplicate-entry`).
    public func claimDirectory(_ path: String) throws {
        try claimed.withLock { names in
            for part in EntryPath.ancestors(of: path) + [path] {
                if names.files.contains(part) { throw Staging.collision(path) }
                names.directories.insert(part)
            }
        }
    }

    /// Claims a file; refuses one claimed before, one where a directory is, or one inside a file (`duplicate-entry`).
    public func claimFile(_ path: String) throws {
        try claimed.withLock { names in
            guard !names.files.contains(path) else {
                throw HaulError(HaulError.Code.duplicateEntry, "refusing archive: entry '\(HaulError.printable(path))' appears twice")
            }
            if names.directories.contains(path) || EntryPath.ancestors(of: path).contains(where: names.files.contains) {
                throw Staging.collision(path)
            }
            names.files.insert(path)
        }
    }
}
