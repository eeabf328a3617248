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

    public init(_ root: StorageRoot) {
        self.root = root
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
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
