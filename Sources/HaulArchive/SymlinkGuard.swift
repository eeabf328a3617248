import CLinux
import Glibc
import HaulCore

/// Creates symlinks after everything else, each only once its target, resolved on disk, stays inside the root.
enum SymlinkGuard {
    /// Creates the link `relative` → `target` inside `staging`, or refuses the archive.
    ///
    /// Resolution walks `target` component by component from the link's directory, following links that are
    /// already on disk (as the kernel would), so chains such as `b → .` then `a → b/..` are caught.
    static func create(_ relative: String, target: String, in staging: Staging) throws {
        let shown = HaulError.printable(relative)
        guard !target.isEmpty, !target.utf8.contains(0) else { throw refuse(shown, target, "has an empty or NUL-bearing target") }
        guard !target.startsWithSlash else { throw refuse(shown, target, "points to an absolute path") }
        let directory = linkDirectory(relative)
        guard resolvesInside(root: staging.root, from: directory, target: target) else {
            throw refuse(shown, target, "resolves outside the destination")
        }
        if !directory.isEmpty { try staging.makeDirectory(directory.joined(separator: "/")) }
        let code = staging.makeSymlink(relative, target: target)
        guard code == 0 else { throw Staging.failure(code, making: relative, doing: "create symlink", at: staging.path(relative)) }
        staging.symlinks.append((relative, target))
    }

    /// Resolves every created link again, now that all of them are on disk, and refuses the archive if one
    /// leads out of the staging directory.
    ///
    /// Each link was checked when it was created, but a later link can change what an earlier one means
    /// (`a → b/..` written before `b → .` makes `a` the destination's parent). So, before publishing: the
    /// kernel resolves each link beneath the staging directory (`openat2` with `RESOLVE_BENEATH`, which
    /// fails with `EXDEV` on any escape), and the component walk of `create` runs again on the final tree,
    /// which also judges the parts of a dangling target that the kernel never reaches.
    static func verifyAll(in staging: Staging) throws {
        guard !staging.symlinks.isEmpty else { return }
        let root = open(staging.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { throw HaulError.archiveIO("open", staging.root, errno: errno) }
        defer { close(root) }
        for (relative, target) in staging.symlinks {
            let shown = HaulError.printable(relative)
            let fd = haul_openat2(root, relative, HAUL_O_PATH | O_CLOEXEC, 0, UInt64(HAUL_RESOLVE_BENEATH))
            if fd >= 0 {
                close(fd)
            } else if errno == EXDEV {
                throw refuse(shown, target, "resolves outside the destination once every link is in place")
            } else if errno == ELOOP {
                throw refuse(shown, target, "is part of a loop of links")
            } else if errno != ENOENT && errno != ENOTDIR && errno != ENOSYS {
                throw HaulError.archiveIO("resolve symlink", staging.path(relative), errno: errno)
            }
            let directory = linkDirectory(relative)
            guard resolvesInside(root: staging.root, from: directory, target: target) else {
                throw refuse(shown, target, "resolves outside the destination once every link is in place")
            }
        }
    }

    /// Whether `target`, read from the directory `start` (components below `root`), stays within `root`.
    static func resolvesInside(root: String, from start: [String], target: String) -> Bool {
        var current = start
        var pending = Array(target.slashComponents().map(String.init).reversed())
        var expansions = 0
        while let part = pending.popLast() {
            if part == "." { continue }
            if part == ".." {
                guard !current.isEmpty else { return false }
                current.removeLast()
                continue
            }
            let full = ([root] + current + [part]).joined(separator: "/")
            var info = stat()
            if lstat(full, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
                expansions += 1
                guard expansions <= 40, let next = readLink(full), !next.startsWithSlash else { return false }
                pending += next.slashComponents().map(String.init).reversed()
            } else {
                current.append(part)
            }
        }
        return true
    }

    /// The components of the directory holding the link `relative` (none at the root).
    private static func linkDirectory(_ relative: String) -> [String] {
        relative.slashComponents().dropLast().map(String.init)
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4097)
        let count = readlink(path, &buffer, 4096)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func refuse(_ shown: String, _ target: String, _ reason: String) -> HaulError {
        HaulError(
            HaulError.Code.unsafeSymlink, "refusing archive: symlink '\(shown)' → '\(HaulError.printable(target))' \(reason)",
            hint: "nothing was extracted; the archive may be hostile")
    }
}
