import Foundation
import HaulCore

/// The directory every worker mounts (possibly at different paths); all writes stay under it.
public struct StorageRoot: Sendable {
    /// Absolute path of the root on this host, symlinks resolved.
    public let path: String

    /// Opens a root.
    /// - Parameter create: create it (and its parents) when missing; otherwise a missing root
    ///   is a `storage-missing` error, so a worker never fills a forgotten mount point.
    public init(_ path: String, create: Bool = true) throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory) {
            guard create else {
                throw HaulError(
                    "storage-missing", "the storage root \(absolute) does not exist",
                    hint: "mount or create it, or pass --create-storage to let haul create it")
            }
        } else if !isDirectory.boolValue {
            throw HaulError("storage", "the storage root \(absolute) is not a directory", hint: "pass a directory with --storage or HAUL_STORAGE")
        }
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

    /// Why this process cannot write to the root now (it creates and removes a probe file, which
    /// catches read-only mounts, permissions and a vanished mount alike), or `nil` when it can.
    public func writeProblem() -> String? {
        let probe = path + "/.haul-write-check-\(getpid())"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return "storage root \(path) is not writable: \(String(cString: strerror(errno)))" }
        close(descriptor)
        unlink(probe)
        return nil
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
                "storage-full", "storage is full: cannot \(doing): \(reason)", hint: "free space on the storage root; it will be retried", transient: true)
        case EACCES, EPERM, EROFS:
            return HaulError(
                "storage-permission", "permission denied: cannot \(doing): \(reason)", hint: "check the storage root's ownership and mount; it will be retried",
                transient: true)
        default:
            return HaulError("storage", "cannot \(doing): \(reason)", hint: "it will be retried", transient: true)
        }
    }
}
