import Glibc
import HaulCore

/// The archive file being written, through a 1 MiB buffer; owned by the writing thread.
final class ArchiveOutput {
    let path: String
    let descriptor: Int32
    private(set) var offset: UInt64 = 0
    private var buffer: [UInt8] = []

    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
        buffer.reserveCapacity(ioChunkSize)
    }

    /// Appends bytes, writing through when the buffer fills.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        offset += UInt64(bytes.count)
        if buffer.count + bytes.count <= ioChunkSize {
            buffer.append(contentsOf: bytes)
            return
        }
        try flush()
        if bytes.count >= ioChunkSize / 2 {
            try writeAll(descriptor, bytes.baseAddress!, bytes.count, path: path)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    func append(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try append($0) }
    }

    /// Overwrites bytes already appended at `position` (a local header whose sizes became known).
    func patch(_ bytes: [UInt8], at position: UInt64) throws {
        try flush()
        try bytes.withUnsafeBytes { try pwriteAll(descriptor, $0.baseAddress!, $0.count, at: Int64(position), path: path) }
    }

    /// Writes out the buffer.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try writeAll(descriptor, $0.baseAddress!, $0.count, path: path) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Appends the whole content of `fd` from its start (a spool file), `count` bytes.
    func appendFile(_ fd: Int32, count: UInt64, scratch: UnsafeMutableRawPointer) throws {
        var done: UInt64 = 0
        while done < count {
            let want = Int(min(UInt64(ioChunkSize), count - done))
            let got = pread(fd, scratch, want, off_t(done))
            guard got > 0 else { throw HaulError.archiveIO("read back a temporary file for", path, errno: got < 0 ? errno : EIO) }
            try append(UnsafeRawBufferPointer(start: scratch, count: got))
            done += UInt64(got)
        }
    }
}
