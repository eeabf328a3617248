import CLinux
import Foundation
import HaulCore

/// A storage root held open for the files of one batch: every file is opened beneath one
/// descriptor of the root, and each folder is made and checked once, rather than the root
/// opened and the folder made and resolved again for each small file.
///
/// Short-lived on purpose (one per batch, on one thread): a root unmounted or remounted while
/// a worker runs is met by the next batch's open, never written past through an old descriptor.
public final class OpenedRoot {
    public let root: StorageRoot
    /// The root's descriptor, opened by the first `openFile` (-1 until then).
    private var descriptor: Int32 = -1
    /// The folders `prepare` made (or found) and checked.
    private var madeFolders: Set<ExactText> = []
    /// The folders `openUnnamed` opened (beneath the root), by their absolute paths.
    private var folders: [ExactText: Int32] = [:]
    /// Whether the root's file system refused an unnamed file (NFS, some FUSE mounts).
    private var unnamedRefused = false

    public init(_ root: StorageRoot) {
        self.root = root
    }

    /// A root whose file system is taken to make no unnamed files when `unnamedFiles` is false
    /// (as NFS): the partial files' path, for tests on file systems that do make them.
    init(_ root: StorageRoot, unnamedFiles: Bool) {
        self.root = root
        unnamedRefused = !unnamedFiles
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        for folder in folders.values { close(folder) }
    }

    /// `StorageRoot.prepare`, making and checking each folder once.
    public func prepare(_ relative: String) throws -> String {
        try root.prepare(relative, madeFolders: &madeFolders)
    }

    /// `StorageRoot.openFile`, beneath this root's descriptor.
    public func openFile(_ absolute: String, _ flags: Int32, doing: String) throws -> Int32 {
        let (root, relative) = try beneath(absolute, doing: doing)
        return try StorageRoot.checkedOpen(StorageRoot.openBeneath(root, relative, flags: flags), absolute, flags, doing: doing)
    }

    /// `StorageRoot.openLocked`, beneath this root's descriptor.
    public func openLocked(_ absolute: String, _ flags: Int32, doing: String) throws -> Int32? {
        let (root, relative) = try beneath(absolute, doing: doing)
        return try PartialLock.open(absolute, root: root, relative: relative, flags: flags, doing: doing)
    }

    /// A new unnamed file (`O_TMPFILE`: no name until it is linked, gone when closed unlinked)
    /// in the folder of `absolute`, opened for writing, and that folder, opened beneath the root
    /// and held open by this root until it closes.
    /// - Returns: nil when the file system makes no unnamed files.
    public func openUnnamed(in absolute: String) throws -> (file: Int32, folder: Int32)? {
        guard !unnamedRefused else { return nil }
        let folder = try folder(of: absolute)
        let fd = openat(folder, ".", HAUL_O_TMPFILE_BIT | O_DIRECTORY | O_WRONLY | O_CLOEXEC, 0o666)
        guard fd >= 0 else {
            // EISDIR: a kernel without O_TMPFILE; EOPNOTSUPP (or ENOSYS, EINVAL from some FUSE
            // mounts): a file system without it.
            if errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL || errno == ENOSYS {
                unnamedRefused = true
                return nil
            }
            throw Errno.storageError(errno, "create a file in \(absolute.parentFolder)")
        }
        return (fd, folder)
    }

    /// The folder of `absolute`, opened beneath the root (a symbolic link on the way is refused).
    private func folder(of absolute: String) throws -> Int32 {
        let path = absolute.parentFolder
        if path.sameBytes(as: root.path) { return try beneath(absolute, doing: "open the folder of").0 }
        if let open = folders[ExactText(path)] { return open }
        let (root, relative) = try beneath(path, doing: "open the folder")
        let fd = try StorageRoot.checkedOpen(StorageRoot.openBeneath(root, relative, flags: HAUL_O_PATH | O_DIRECTORY), path, 0, doing: "open the folder")
        folders[ExactText(path)] = fd
        return fd
    }

    /// The root's descriptor (opened on first use) and `absolute` relative to it.
    private func beneath(_ absolute: String, doing: String) throws -> (Int32, String) {
        guard let relative = root.relative(absolute) else { throw StorageRoot.openFailure(EXDEV, doing: doing, absolute) }
        if descriptor < 0 {
            descriptor = open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { throw Errno.storageError(errno, "open the storage root \(root.path) to \(doing) \(absolute)") }
        }
        return (descriptor, relative)
    }
}
