import Foundation
import HaulCore

/// A file open for uploading, with the identity (device, inode, size, mtime) it had when opened.
///
/// Bytes are read with `pread`, so several cursors can share the descriptor; every read first
/// checks that the path still names the same, unmodified file. Not `Sendable`: it belongs to the
/// uploading thread.
final class UploadFile {
    /// The path as the caller gave it, for messages.
    let path: String
    /// Size in bytes when opened.
    var size: Int64 { identity.size }
    private let descriptor: Int32
    private let identity: Identity

    /// What must stay the same for the upload to be of one consistent file.
    private struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
        }

        static func == (a: Identity, b: Identity) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
        }
    }

    /// Opens `path` for reading; throws `file-unreadable` for a missing, unreadable or non-regular file.
    init(path: String) throws(HaulError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw HaulError(.fileUnreadable, "cannot open '\(path)': \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw HaulError(.fileUnreadable, "'\(path)' is not a regular file", hint: "upload a regular file")
        }
        descriptor = fd
        identity = Identity(info)
    }

    deinit { close(descriptor) }

    /// Throws `file-changed` when the path no longer names the file as it was when opened.
    func checkUnchanged() throws(HaulError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw changed("it was removed or renamed") }
        let now = Identity(info)
        if now == identity { return }
        if now.device != identity.device || now.inode != identity.inode { throw changed("it was replaced by another file") }
        if now.size != identity.size { throw changed("its size went from \(identity.size) to \(now.size) bytes") }
        throw changed("its modification time changed")
    }

    /// Reads up to `count` bytes at `offset` into `buffer` after checking the file is unchanged.
    /// - Returns: the number of bytes read, short only at the end of the file.
    func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws(HaulError) -> Int {
        try checkUnchanged()
        var done = 0
        while done < count {
            let n = pread(descriptor, buffer + done, count - done, off_t(offset) + off_t(done))
            if n > 0 {
                done += n
            } else if n == 0 {
                break
            } else if errno != EINTR {
                throw HaulError(.fileUnreadable, "reading '\(path)' failed: \(String(cString: strerror(errno)))", transient: false)
            }
        }
        return done
    }

    /// The `file-changed` error, saying `how`.
    func changed(_ how: String) -> HaulError {
        HaulError(
            .fileChanged, "'\(path)' changed during the upload: \(how)",
            hint: "upload it again once nothing is writing to it")
    }
}
