import CLinux
import Foundation
import HaulCore

/// The directory every worker mounts (possibly at different paths); all writes stay under it.
public struct StorageRoot: Sendable {
    /// Absolute path of the root on this host, symlinks resolved.
    public let path: String

    /// What messages call a root, and how the user names another: a worker's `--storage`, or
    /// the folder `haul get -o` writes into.
    public struct Naming: Sendable {
        /// The root as messages call it ("the storage root").
        public let noun: String
        /// How to name a usable one instead.
        public let remedy: String

        /// A worker's `--storage` (or `HAUL_STORAGE`).
        public static let storageOption = Naming(noun: "the storage root", remedy: "pass a writable directory with --storage or HAUL_STORAGE")
        /// The folder of `haul get -o`.
        public static let outputFolder = Naming(noun: "the output folder", remedy: "give -o a path in a folder you can write")
    }

    /// Opens a root.
    /// - Parameters:
    ///   - create: create it (and its parents) when missing; otherwise a missing root is a
    ///     `storage-missing` error, so a worker never fills a forgotten mount point.
    ///   - naming: what the errors call the root and how they say to name another.
    public init(_ path: String, create: Bool = true, naming: Naming = .storageOption) throws {
        let absolute = path.startsWithSlash ? path : FileManager.default.currentDirectoryPath + "/" + path
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory) {
            guard create else {
                throw HaulError(
                    .storageMissing, "\(naming.noun) \(absolute) does not exist",
                    hint: "mount or create it, or pass --create-storage to let haul create it")
            }
            do {
                try Directories.create(absolute)
            } catch let error as HaulError {
                // It names the folder that could not be made ("cannot create directory …").
                throw HaulError(error.code, error.message, hint: naming.remedy)
            }
        } else if !isDirectory.boolValue {
            throw HaulError(.storage, "\(naming.noun) \(absolute) is not a directory", hint: naming.remedy)
        }
        guard let resolved = Self.resolve(absolute) else {
            throw Errno.storageError(errno, "resolve \(naming.noun) \(absolute)")
        }
        self.path = resolved
    }

    /// Opens a root (see `init`) that this process can write now, or throws: the errors of
    /// `init`, or `storage-permission` with what `writeProblem` found.
    public static func writable(_ path: String, create: Bool = true, naming: Naming) throws -> StorageRoot {
        let root = try StorageRoot(path, create: create, naming: naming)
        if let problem = root.writeProblem(naming: naming) {
            throw HaulError(.storagePermission, problem, hint: "fix the mount or its permissions for this user (uid \(getuid())), or \(naming.remedy)")
        }
        return root
    }

    /// Why this process cannot write to the root now (it creates a file there, which catches
    /// read-only mounts, permissions and a vanished mount alike), or `nil` when it can.
    ///
    /// The file is unnamed (`O_TMPFILE`), so the check neither leaves a name behind nor meets
    /// one: a predictable name opened with `O_TRUNC` would let another user who can write the
    /// folder plant a symbolic link there and have haul truncate its target. Where the file
    /// system has no unnamed files, the name is random and made with `O_EXCL`, which never
    /// opens an existing entry or follows a link.
    public func writeProblem(naming: Naming = .storageOption) -> String? {
        var descriptor = open(path, HAUL_O_TMPFILE_BIT | O_DIRECTORY | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
            let probe = path + "/.haul-write-check-\(UInt64.random(in: 0...UInt64.max))"
            descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 { unlink(probe) }
        }
        guard descriptor >= 0 else { return "\(naming.noun) \(path) is not writable: \(String(cString: strerror(errno)))" }
        close(descriptor)
        return nil
    }

    /// The absolute path of a relative path read back from the database (a destination, a part file),
    /// refused with `unsafe-path` unless it passes the rules `SafePath` applies to input.
    public func recorded(_ relative: String) throws -> String {
        do {
            return path + "/" + (try SafePath.validate(relative, what: "the recorded path"))
        } catch let error as HaulError {
            throw HaulError(
                .unsafePath, "the database holds an unsafe storage path: \(error.message)",
                hint: "the row was altered; nothing was read or written there")
        }
    }

    /// Opens `absolute` (a path under the root) relative to a descriptor of the root, so that neither a
    /// symlink in its last component nor one in a folder leading out of the root is followed: `openat2`
    /// with `RESOLVE_BENEATH` and `O_NOFOLLOW` (`O_NOFOLLOW` alone on kernels before 5.6). New files get
    /// `0666` less the umask. Returns the descriptor, or -1 with `errno` set (`ELOOP` or `EXDEV` for a link).
    public func descriptor(_ absolute: String, _ flags: Int32) -> Int32 {
        guard let relative = relative(absolute) else {
            errno = EXDEV
            return -1
        }
        let root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return -1 }
        defer { close(root) }
        return Self.openBeneath(root, relative, flags: flags)
    }

    /// `absolute` relative to the root; `nil` when it is not a path under the root.
    func relative(_ absolute: String) -> String? {
        let prefix = path == "/" ? "/" : path + "/"
        // By bytes: as `Character`s, the root's last `/` and a name's leading combining mark are one (`PathText`).
        guard absolute.utf8.starts(with: prefix.utf8), absolute.utf8.count > prefix.utf8.count else { return nil }
        return String(decoding: absolute.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// `descriptor`'s open of `relative` beneath the root's descriptor `root`.
    static func openBeneath(_ root: Int32, _ relative: String, flags: Int32) -> Int32 {
        // openat2 refuses a mode without O_CREAT.
        let mode = UInt32(flags & O_CREAT != 0 ? 0o666 : 0)
        let fd = haul_openat2(root, relative, flags | O_NOFOLLOW | O_CLOEXEC, mode, UInt64(HAUL_RESOLVE_BENEATH))
        if fd < 0 && errno == ENOSYS { return openat(root, relative, flags | O_NOFOLLOW | O_CLOEXEC, mode) }
        return fd
    }

    /// `descriptor`, throwing a storage error (`unsafe-path` for a symlink) that names `doing`.
    /// A file it may create is refused (`unsafe-path`) when it already belongs to another user
    /// in a folder anyone may write (sticky, as `/tmp`), unless that user owns the folder: the
    /// rule of the kernel's `fs.protected_regular`, kept when that switch is off. Otherwise a
    /// user could plant a file under a partial file's predictable name, and the download would
    /// be written into it and published still theirs, to change after Haul verified it.
    public func openFile(_ absolute: String, _ flags: Int32, doing: String) throws -> Int32 {
        try Self.checkedOpen(descriptor(absolute, flags), absolute, flags, doing: doing)
    }

    /// `openFile` for a partial file, locked against every other writer (`PartialLock`).
    /// - Returns: the locked descriptor, or `nil` when another writer holds the file.
    public func openLocked(_ absolute: String, _ flags: Int32, doing: String) throws -> Int32? {
        try OpenedRoot(self).openLocked(absolute, flags, doing: doing)
    }

    /// `fd`, just opened as `absolute` with `flags` (-1 with `errno` set if that failed), or the
    /// error `openFile` throws for it; a refused file is closed.
    static func checkedOpen(_ fd: Int32, _ absolute: String, _ flags: Int32, doing: String) throws -> Int32 {
        guard fd >= 0 else { throw Self.openFailure(errno, doing: doing, absolute) }
        if flags & O_CREAT != 0, let owner = Self.plantedOwner(fd, in: absolute.parentFolder) {
            close(fd)
            throw HaulError(
                .unsafePath, "refusing to \(doing) \(absolute): a file of user \(owner) is already there, in a folder anyone may write",
                hint: "remove it, or download into a folder other users cannot write")
        }
        return fd
    }

    /// The owner of the open file `fd` when it belongs to neither this process nor the owner of
    /// `folder`, and `folder` is writable by anyone and sticky; `nil` otherwise.
    static func plantedOwner(_ fd: Int32, in folder: String) -> uid_t? {
        var file = stat()
        var directory = stat()
        guard fstat(fd, &file) == 0, file.st_uid != geteuid(), stat(folder, &directory) == 0,
            directory.st_mode & S_ISVTX != 0, directory.st_mode & S_IWOTH != 0, file.st_uid != directory.st_uid
        else { return nil }
        return file.st_uid
    }

    /// The error for a failed `descriptor`: `unsafe-path` for a symlink, else a storage error.
    public static func openFailure(_ code: Int32, doing: String, _ absolute: String) -> HaulError {
        guard code == ELOOP || code == EXDEV else { return Errno.storageError(code, "\(doing) \(absolute)") }
        return HaulError(
            .unsafePath, "refusing to \(doing) \(absolute): a symbolic link there (or on the way) leads elsewhere",
            hint: "remove the link from the storage root; Haul never writes through one")
    }

    /// `realpath(3)`: the absolute path with every symbolic link resolved, `nil` if it does not exist.
    static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The absolute path for a validated relative destination, creating its parent directories.
    /// Refuses a parent that resolves (through symlinks) outside the root.
    public func prepare(_ relative: String) throws -> String {
        var made: Set<ExactText> = []
        return try prepare(relative, madeFolders: &made)
    }

    /// `prepare`, skipping the folders in `madeFolders` (made and checked by an earlier call)
    /// and adding the one it makes and checks (by bytes: `café` in NFC and in NFD are two folders).
    func prepare(_ relative: String, madeFolders: inout Set<ExactText>) throws -> String {
        let clean = try SafePath.validate(relative)
        let full = path + "/" + clean
        let parent = full.parentFolder
        if madeFolders.contains(ExactText(parent)) { return full }
        try Directories.create(parent)
        guard let resolved = Self.resolve(parent) else { throw Errno.storageError(errno, "resolve \(parent)") }
        // By bytes, as the kernel resolved it: Swift's hasPrefix would take a sibling folder
        // whose name is the root's in another normalization for the root itself.
        guard resolved.sameBytes(as: path) || resolved.startsWithBytes(of: path + "/") else {
            throw HaulError(
                .unsafePath, "destination '\(clean)' resolves outside the storage root through a symbolic link",
                hint: "remove the link or choose another --dest")
        }
        madeFolders.insert(ExactText(parent))
        return full
    }
}

/// `errno` values as Haul errors.
public enum Errno {
    /// What to do about a file where a folder of the path should be (`ENOTDIR`).
    static let fileInTheWay = "a file on the storage has the name of a folder on the path; move it, or give the transfer another destination"

    /// A storage failure: full disk and permissions are transient (retried with backoff); a
    /// directory where a file goes, or a file where a folder goes, is not (it stays in the way
    /// until someone moves it).
    public static func storageError(_ code: Int32, _ doing: String) -> HaulError {
        let reason = String(cString: strerror(code))
        switch code {
        case EISDIR:
            return HaulError(
                .storage, "cannot \(doing): \(reason)",
                hint: "a directory on the storage has the file's name; move it, or give the transfer another destination")
        case ENOTDIR:
            return HaulError(.storage, "cannot \(doing): \(reason)", hint: fileInTheWay)
        case ENOSPC, EDQUOT:
            return HaulError(
                .storageFull, "storage is full: cannot \(doing): \(reason)", hint: "free space on the storage root", transient: true)
        case EACCES, EPERM, EROFS:
            return HaulError(
                .storagePermission, "permission denied: cannot \(doing): \(reason)", hint: "check the storage root's ownership and mount",
                transient: true)
        default:
            return HaulError(.storage, "cannot \(doing): \(reason)", transient: true)
        }
    }
}
