import Foundation
import HaulCore

/// The directory every worker mounts (possibly at different paths); all writes stay under it.
public struct StorageRoot: Sendable {
    /// Absolute path of the root on this host, symlinks resolved.
    public let path: String

    /// Opens a root, creating it if missing.
    public init(_ path: String) throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        do {
            try FileManager.default.createDirectory(atPath: absolute, withIntermediateDirectories: true)
        } catch {
            throw HaulError(
                "storage", "cannot use \(absolute) as the storage root: \(error.localizedDescription)",
                hint: "pass a writable directory with --storage or HAUL_STORAGE")
        }
        guard let resolved = Self.resolve(absolute) else {
            throw Errno.storageError(errno, "resolve the storage root \(absolute)")
        }
        self.path = resolved
    }

    /// `realpath(3)`: the absolute path with every symbolic link resolved, `nil` if it does not exist.
    static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The folder holding `path` (`/a/b` for `/a/b/c`; `/` for `/c`).
    public static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The absolute path for a validated relative destination, creating its parent directories.
    /// Refuses a parent that resolves (through symlinks) outside the root.
    public func prepare(_ relative: String) throws -> String {
        let clean = try SafePath.validate(relative)
        let full = path + "/" + clean
        let parent = Self.folder(of: full)
        try Directories.create(parent)
        guard let resolved = Self.resolve(parent) else { throw Errno.storageError(errno, "resolve \(parent)") }
        guard resolved == path || resolved.hasPrefix(path + "/") else {
            throw HaulError(
                "unsafe-path", "destination '\(clean)' resolves outside the storage root through a symbolic link",
                hint: "remove the link or choose another --dest")
        }
        return full
    }
}

/// `errno` values as Haul errors.
public enum Errno {
    /// A storage failure: full disk and permissions are transient (retried with backoff).
    public static func storageError(_ code: Int32, _ doing: String) -> HaulError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOSPC, EDQUOT:
            return HaulError(
                "storage-full", "storage is full: cannot \(doing): \(reason)", hint: "free space on the storage root", transient: true)
        case EACCES, EPERM, EROFS:
            return HaulError(
                "storage-permission", "permission denied: cannot \(doing): \(reason)", hint: "check the storage root's ownership and mount",
                transient: true)
        default:
            return HaulError("storage", "cannot \(doing): \(reason)", transient: true)
        }
    }
}
