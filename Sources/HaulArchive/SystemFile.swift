import Glibc
import HaulCore

/// An open file descriptor read with `pread`, so several threads may read it at once.
final class InputFile: Sendable {
    let path: String
    let descriptor: Int32
    let size: Int64

    init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HaulError.archiveIO("open", path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw HaulError.archiveIO("stat", path, errno: code)
        }
        self.path = path
        self.descriptor = fd
        self.size = Int64(info.st_size)
    }

    /// Takes over the open file `fd` (closed with this), called `name` in error messages.
    init(descriptor fd: Int32, name: String) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw HaulError.archiveIO("stat", name, errno: code)
        }
        path = name
        descriptor = fd
        size = Int64(info.st_size)
    }

    deinit { close(descriptor) }

    /// Reads up to `count` bytes at `offset` into `buffer`; returns how many were read (less only at end of file).
    func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws -> Int {
        var done = 0
        while done < count {
            let got = pread(descriptor, buffer + done, count - done, off_t(offset) + off_t(done))
            if got < 0 {
                if errno == EINTR { continue }
                throw HaulError.archiveIO("read", path, errno: errno)
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// Reads exactly `count` bytes at `offset`, or throws `corrupt-archive` naming `what` when the file is shorter.
    func bytes(_ count: Int, at offset: Int64, what: String) throws -> [UInt8] {
        guard count >= 0, offset >= 0, offset <= size, Int64(count) <= size - offset else {
            throw HaulError.corrupt("\(what) lies past the end of the file")
        }
        var result = [UInt8](repeating: 0, count: count)
        let got = try result.withUnsafeMutableBytes { try read(into: $0.baseAddress!, count: count, at: offset) }
        guard got == count else { throw HaulError.corrupt("\(what) lies past the end of the file") }
        return result
    }
}

/// Writes all of `count` bytes to `fd`, retrying short writes.
func writeAll(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, path: String) throws {
    var done = 0
    while done < count {
        let wrote = write(fd, buffer + done, count - done)
        if wrote < 0 {
            if errno == EINTR { continue }
            throw HaulError.archiveIO("write", path, errno: errno)
        }
        done += wrote
    }
}

/// Writes all of `count` bytes at `offset` in `fd`.
func pwriteAll(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, at offset: Int64, path: String) throws {
    var done = 0
    while done < count {
        let wrote = pwrite(fd, buffer + done, count - done, off_t(offset) + off_t(done))
        if wrote < 0 {
            if errno == EINTR { continue }
            throw HaulError.archiveIO("write", path, errno: errno)
        }
        done += wrote
    }
}

/// Runs `body` with the C string of `path`, throwing the errno of a `-1` result as an I/O error.
@discardableResult
func check(_ what: String, _ path: String, _ body: () -> Int32) throws -> Int32 {
    while true {
        let result = body()
        if result != -1 { return result }
        if errno != EINTR { throw HaulError.archiveIO(what, path, errno: errno) }
    }
}

/// Sets a path's access and modification time to `seconds` since 1970 without following a final symlink.
func setModificationTime(_ path: String, seconds: Int64) {
    var times = [timespec(tv_sec: time_t(seconds), tv_nsec: 0), timespec(tv_sec: time_t(seconds), tv_nsec: 0)]
    _ = utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
}

/// The size of an allocation used for one read or one write in a hot path.
let ioChunkSize = 1 << 20
