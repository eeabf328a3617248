import CLinux
import Foundation
import HaulCore

/// A reference to one open file, to make it durable from another thread.
///
/// It holds a duplicate of a writer's descriptor, so it always names the file whose bytes were
/// written, whatever happens to the path since (a partial file published by a rename, a new
/// partial file of a later transfer under the same name). The descriptor closes when the last
/// reference goes, so nothing keeps a published or deleted file open once its checkpoints are
/// settled.
public final class SyncHandle: Sendable {
    /// The file as the kernel knows it: two handles with equal identities name one file.
    public struct Identity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    private let fd: Int32
    /// The file's identity (device and inode), fixed while a descriptor holds it open.
    public let identity: Identity
    /// The name the file was opened under, for messages only.
    public let path: String

    /// Duplicates `descriptor` (the caller keeps its own). - Throws: a storage error when the
    /// descriptor cannot be duplicated or examined (too many open files, say).
    public init(duplicating descriptor: Int32, path: String) throws {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw Errno.storageError(errno, "keep \(path) open to sync it") }
        var attributes = stat()
        guard fstat(copy, &attributes) == 0 else {
            let error = Errno.storageError(errno, "examine \(path) to sync it")
            close(copy)
            throw error
        }
        fd = copy
        identity = Identity(device: UInt64(attributes.st_dev), inode: UInt64(attributes.st_ino))
        self.path = path
    }

    deinit { close(fd) }

    /// `fdatasync`s the file. - Returns: the failure, if any.
    public func sync() -> HaulError? {
        fdatasync(fd) == 0 ? nil : Errno.storageError(errno, "sync \(path)")
    }

    /// `syncfs` of the file system holding the file. - Returns: the failure, if any.
    public func syncFileSystem() -> HaulError? {
        syncfs(fd) == 0 ? nil : Errno.storageError(errno, "sync the file system of \(path)")
    }
}
