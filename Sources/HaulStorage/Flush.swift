import CLinux
import Foundation
import HaulCore

/// Making many paths durable at once: one `syncfs` of their file system when there are
/// several (one flush instead of one per file), else an `fsync` each.
public enum Flush {
    /// From this many paths on, one `syncfs` is cheaper than an `fsync` each.
    public static let fileSystemThreshold = 4

    /// Flushes `paths` (files or folders), each once. - Returns: the failure of each path that
    /// could not be made durable (keyed by bytes: two spellings of one name are two files).
    public static func paths(_ paths: [String]) -> [ExactText: HaulError] {
        let paths = Set(paths.map(ExactText.init))
        if paths.count >= fileSystemThreshold, let any = paths.first {
            guard let error = fileSystem(containing: any.text) else { return [:] }
            return Dictionary(uniqueKeysWithValues: paths.map { ($0, error) })
        }
        var failures: [ExactText: HaulError] = [:]
        for path in paths {
            let fd = open(path.text, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                failures[path] = Errno.storageError(errno, "open \(path) to sync it")
                continue
            }
            if fsync(fd) != 0 { failures[path] = Errno.storageError(errno, "sync \(path)") }
            close(fd)
        }
        return failures
    }

    /// Flushes the open files `descriptors` (all on one file system), each once. - Returns: the
    /// failure of each descriptor whose file could not be made durable.
    public static func descriptors(_ descriptors: [Int32]) -> [Int32: HaulError] {
        let descriptors = Set(descriptors)
        if descriptors.count >= fileSystemThreshold, let any = descriptors.first {
            guard syncfs(any) != 0 else { return [:] }
            let error = Errno.storageError(errno, "sync the file system of the batch's files")
            return Dictionary(uniqueKeysWithValues: descriptors.map { ($0, error) })
        }
        var failures: [Int32: HaulError] = [:]
        for fd in descriptors where fsync(fd) != 0 { failures[fd] = Errno.storageError(errno, "sync a file of the batch") }
        return failures
    }

    /// `syncfs` of the file system holding `path`. - Returns: the failure, if any.
    private static func fileSystem(containing path: String) -> HaulError? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return Errno.storageError(errno, "open \(path) to sync it") }
        defer { close(fd) }
        guard syncfs(fd) == 0 else { return Errno.storageError(errno, "sync the file system of \(path)") }
        return nil
    }
}
