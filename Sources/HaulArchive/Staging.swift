import CLinux
import Glibc
import HaulCore

/// A fresh directory next to the destination that receives everything, renamed into place only on success.
///
/// The destination may be missing or an empty directory (rename replaces an empty directory atomically);
/// anything else is refused before any work starts. Owned by the extracting thread.
final class Staging {
    let root: String
    let destination: String
    /// `root`, opened once: every file, folder and link is made beneath it (`createFile`, `inFolder`).
    private let rootDescriptor: Int32
    private var directoryTimes: [(path: String, seconds: Int64)] = []
    /// The folders made (or found to be folders) so far, by bytes: the files of one folder do not
    /// each make it and its ancestors again. Nothing else writes in the staging directory (it is
    /// private to its owner), and every file is still created by the kernel beneath it.
    private var madeDirectories = Set<ExactText>()
    /// The symlinks created so far (relative path, target), for `SymlinkGuard.verifyAll`.
    var symlinks: [(path: String, target: String)] = []

    /// Checks the destination and creates `.haul-extract-XXXXXX` in its parent directory.
    init(destination: String) throws {
        let trimmed = destination.trimmingTrailingSlashes
        var info = stat()
        if lstat(trimmed, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR, try Staging.isEmptyDirectory(trimmed) else {
                throw HaulError(
                    HaulError.Code.destinationNotEmpty, "the destination '\(trimmed)' exists and is not an empty directory",
                    hint: "choose a new destination or remove the existing one")
            }
        } else if errno != ENOENT {
            throw HaulError.archiveIO("inspect", trimmed, errno: errno)
        }
        let parent = trimmed.parentFolder
        var template = Array("\(parent)/.haul-extract-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HaulError.archiveIO("create a staging directory in", parent, errno: errno)
        }
        self.root = String(cString: made)
        self.destination = trimmed
        let descriptor = open(root, HAUL_O_PATH | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            Staging.removeTree(root)
            throw HaulError.archiveIO("open the staging directory", root, errno: code)
        }
        self.rootDescriptor = descriptor
    }

    deinit { close(rootDescriptor) }

    /// Bytes available to unprivileged users on the destination's file system, and its size;
    /// unbounded for a file system that reports no size at all (`ramfs`, some FUSE mounts).
    func space() -> (free: Int64, total: Int64) {
        var info = statvfs()
        guard statvfs(root, &info) == 0, info.f_blocks > 0 else { return (Int64.max, 0) }
        return (Int64(info.f_bavail) * Int64(info.f_frsize), Int64(info.f_blocks) * Int64(info.f_frsize))
    }

    /// The absolute path of an entry's normalised relative path.
    func path(_ relative: String) -> String { "\(root)/\(relative)" }

    /// Creates a directory (and its missing ancestors) for a normalised relative path, each in its
    /// folder resolved beneath the staging directory (`inFolder`).
    func makeDirectory(_ relative: String, modificationTime: Int64? = nil) throws {
        for part in EntryPath.ancestors(of: relative) + [relative] where !madeDirectories.contains(ExactText(part)) {
            let code = inFolder(of: part) { folder, name in
                if mkdirat(folder, name, 0o777) == 0 { return 0 }
                let code = errno
                var info = stat()
                return code == EEXIST && fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && info.st_mode & S_IFMT == S_IFDIR ? 0 : code
            }
            guard code == 0 else { throw Staging.failure(code, making: relative, doing: "create directory", at: path(part)) }
            madeDirectories.insert(ExactText(part))
        }
        if let modificationTime { directoryTimes.append((relative, modificationTime)) }
    }

    /// Creates the symlink `relative` → `target` in its folder resolved beneath the staging
    /// directory. - Returns: 0, or the `errno` of the failure (`EXDEV`: the folder leads out).
    func makeSymlink(_ relative: String, target: String) -> Int32 {
        inFolder(of: relative) { folder, name in symlinkat(target, folder, name) == 0 ? 0 : errno }
    }

    /// Runs `make` with a descriptor of the folder of `relative` (a normalised path), resolved by
    /// the kernel beneath the staging directory (`openat2` with `RESOLVE_BENEATH`), and the last
    /// component's name. - Returns: what `make` returns (0, or an `errno`), or the `errno` of
    /// opening the folder (`EXDEV` when it leads out).
    private func inFolder(of relative: String, _ make: (Int32, String) -> Int32) -> Int32 {
        let parts = relative.slashComponents()
        guard let name = parts.last else { return EINVAL }
        guard parts.count > 1 else { return make(rootDescriptor, String(name)) }
        let folder = parts.dropLast().joined(separator: "/")
        let flags = HAUL_O_PATH | O_DIRECTORY | O_CLOEXEC
        var descriptor = haul_openat2(rootDescriptor, folder, flags, 0, UInt64(HAUL_RESOLVE_BENEATH))
        if descriptor < 0 && errno == ENOSYS { descriptor = open(path(folder), flags) }
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        return make(descriptor, String(name))
    }

    /// Creates a new regular file for writing; an existing name (also through case folding) is a collision.
    ///
    /// The kernel resolves `relative` beneath the staging directory (`openat2` with
    /// `RESOLVE_BENEATH`): the entry names were checked before, and this holds even if a check
    /// missed a way out (as one did: `PathText`). Where `openat2` is missing, a plain open.
    func createFile(_ relative: String) throws -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        var fd = haul_openat2(rootDescriptor, relative, flags, 0o600, UInt64(HAUL_RESOLVE_BENEATH))
        if fd < 0 && errno == ENOSYS { fd = open(path(relative), flags, 0o600) }
        guard fd >= 0 else { throw Staging.failure(errno == ELOOP ? EEXIST : errno, making: relative, doing: "create", at: path(relative)) }
        return fd
    }

    /// Why making `relative` failed with `code`: another entry holds the name or a file is used as
    /// a folder (`EEXIST`, `ENOTDIR`: a collision), the name leads out (`EXDEV`), or an I/O error.
    static func failure(_ code: Int32, making relative: String, doing: String, at path: String) -> HaulError {
        switch code {
        case EEXIST, ENOTDIR: collision(relative)
        case EXDEV: HaulError.unsafeName(relative, "leads out of the destination")
        default: HaulError.archiveIO(doing, path, errno: code)
        }
    }

    /// Gives a written file its final mode (0777 or 0666 less the umask, nothing else), closes it and sets its time.
    static func finishFile(_ fd: Int32, _ full: String, executable: Bool, modificationTime: Int64) throws {
        defer { close(fd) }
        try check("set the mode of", full) { fchmod(fd, FileMode.file(executable: executable)) }
        var times = [timespec(tv_sec: time_t(modificationTime), tv_nsec: 0), timespec(tv_sec: time_t(modificationTime), tv_nsec: 0)]
        try check("set the time of", full) { futimens(fd, &times) }
    }

    /// Gives directories their recorded times, deepest first, and the staging directory (made 0700 by
    /// `mkdtemp`) the mode a new directory gets under the umask, then renames it into place.
    func publish() throws {
        for (relative, seconds) in directoryTimes.sorted(by: { $0.path.count > $1.path.count }) {
            setModificationTime(path(relative), seconds: seconds)
        }
        try check("set the mode of", root) { chmod(root, FileMode.directory) }
        try check("rename the staging directory to", destination) { rename(root, destination) }
    }

    /// Removes the staging directory and everything in it, never following symlinks.
    func discard() { Staging.removeTree(root) }

    /// Removes `path` and, if it is a real directory, everything below it; symlinks are removed, not followed.
    static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            for name in (try? listDirectory(path)) ?? [] { removeTree("\(path)/\(name)") }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// The names in a directory other than `.` and `..`, in no particular order.
    static func listDirectory(_ path: String) throws -> [String] {
        guard let handle = opendir(path) else { throw HaulError.archiveIO("read", path, errno: errno) }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func collision(_ relative: String) -> HaulError {
        HaulError(
            HaulError.Code.duplicateEntry, "refusing archive: entry '\(HaulError.printable(relative))' collides with another entry",
            hint: "two names that the file system treats as one, or a file used as a directory")
    }

    private static func isEmptyDirectory(_ path: String) throws -> Bool {
        try listDirectory(path).isEmpty
    }
}
