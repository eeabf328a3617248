import CLinux
import Foundation
import HaulCore
import Synchronization

/// Keeps two processes from writing one partial file at once.
///
/// Two `haul get` commands saving one file (the same `-o FILE`, or URLs the origin names alike,
/// into one folder) would both write `FILE.haul-partial`, and each would publish a mix of both.
/// The database keeps a fleet's transfers apart, but two gets may not share a database, and the
/// file is what they share. So a writer locks the partial file it makes, with an open file
/// description lock (`F_OFD_SETLK`: two opens conflict even within one process, and closing
/// another descriptor of the file does not drop it), and holds the lock until the file is
/// renamed into place. A second writer is refused at once (`destination-busy`), before it has
/// truncated, sized or written anything.
///
/// A lock is checked against the name: a writer that opened the name just before its holder
/// renamed the file into place would otherwise lock the published file and write into it.
/// On a file system without such locks (`ENOLCK`, `EINVAL`) there is nothing to hold, and the
/// file is written as before.
enum PartialLock {
    /// What locking a just-opened file found.
    enum Outcome: Equatable {
        /// This open file description holds the lock, on the file the name still names.
        case held
        /// Another open file description holds a lock on the file: another writer.
        case busy
        /// The name no longer names the locked file (renamed into place, or replaced).
        case moved
    }

    /// Locks `fd`, opened as `relative` beneath the root descriptor `root`, without waiting.
    static func take(_ fd: Int32, root: Int32, relative: String) -> Outcome {
        if haul_lock_whole_file(fd) != 0 {
            return errno == EAGAIN || errno == EACCES ? .busy : .held
        }
        var locked = stat()
        var named = stat()
        guard fstat(fd, &locked) == 0, fstatat(root, relative, &named, AT_SYMLINK_NOFOLLOW) == 0,
            locked.st_dev == named.st_dev, locked.st_ino == named.st_ino
        else { return .moved }
        return .held
    }

    /// What is at a partial file's name.
    enum Presence: Equatable {
        /// Nothing.
        case absent
        /// Something no writer holds locked (or that cannot be opened to tell).
        case unheld
        /// A file a writer holds locked.
        case held
    }

    /// What is at `path`: nothing, or a file a writer holds locked, or something else.
    static func presence(at path: String) -> Presence {
        let fd = Foundation.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? .absent : .unheld }
        defer { close(fd) }
        return haul_file_is_locked(fd) == 1 ? .held : .unheld
    }

    /// Whether a writer holds a lock on the file at `path` (`false` when there is none, or it
    /// cannot be read).
    static func isHeld(_ path: String) -> Bool {
        presence(at: path) == .held
    }

    /// Opens `absolute` (`relative` beneath the root descriptor `root`) with `flags` as
    /// `StorageRoot.openFile` does, and locks it.
    /// - Returns: the locked descriptor, or `nil` when another writer holds the file.
    static func open(_ absolute: String, root: Int32, relative: String, flags: Int32, doing: String) throws -> Int32? {
        // A name that keeps moving under this open is a writer publishing again and again: busy.
        for _ in 0..<3 {
            let fd = try StorageRoot.checkedOpen(StorageRoot.openBeneath(root, relative, flags: flags), absolute, flags, doing: doing)
            switch take(fd, root: root, relative: relative) {
            case .held: return fd
            case .busy:
                close(fd)
                return nil
            case .moved: close(fd)
            }
        }
        return nil
    }
}

/// The partial files this process keeps locked between opens: a `haul get` makes its file's
/// partial when it plans it, its segments write it on other descriptors, and its finalizer
/// publishes it; the lock (`PartialLock`) is taken once and held throughout, here.
public final class HeldPartials: Sendable {
    /// By bytes: two spellings of one name (NFC, NFD) are two files, each with its own descriptor.
    private let held = Mutex<[ExactText: Int32]>([:])

    public init() {}

    deinit {
        held.withLock { held in for fd in held.values { close(fd) } }
    }

    /// The locked descriptor of `path`: the one this process holds, or a new one from `open`
    /// (which opens and locks it), kept until `release`. One open at a time: lanes that resume
    /// segments of one file together never both try to lock it, which would refuse the second.
    func descriptor(of path: String, orOpen open: () throws -> Int32) throws -> Int32 {
        try held.withLock { held in
            if let fd = held[ExactText(path)] { return fd }
            let fd = try open()
            held[ExactText(path)] = fd
            return fd
        }
    }

    /// Gives up the lock on `path` (it was published or removed): another writer may take it.
    public func release(_ path: String) {
        if let fd = held.withLock({ $0.removeValue(forKey: ExactText(path)) }) { close(fd) }
    }
}

extension HaulError.Kind {
    /// A partial file another process holds locked (`PartialLock`): the refusal `TransferFiles.busy`.
    public static let partialLocked = HaulError.Kind("partial-locked")
}
