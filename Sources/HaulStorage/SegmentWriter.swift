import Foundation
import HaulCore

/// Writes one segment's bytes to a file in large blocks (durability is the caller's: the
/// worker's group-commit thread `fdatasync`s the file before recording a checkpoint).
///
/// libcurl hands over 16–512 KiB at a time; writing each chunk with its own syscall is what
/// makes naive downloaders slow, so bytes gather in `buffer` and go out with one `pwrite`.
/// Owned by one thread; the buffer is reused across segments.
public final class SegmentWriter {
    private let buffer: UnsafeMutableRawBufferPointer
    private var buffered = 0
    private var fd: Int32 = -1
    private var position: Int64 = 0
    /// The file being written.
    public private(set) var path = ""
    /// The open file being written, for the thread that makes it durable (nil when closed).
    public private(set) var syncHandle: SyncHandle?

    /// Bytes handed to `write` since `open` (buffered or written).
    public private(set) var bytesAccepted: Int64 = 0

    /// Allocates the reusable buffer.
    public init(bufferSize: Int = 1 << 20) {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 4096)
    }

    deinit {
        close()
        buffer.deallocate()
    }

    /// Starts writing at `offset` of the file at `path`.
    /// - Parameter create: create the file if missing; otherwise a missing file is an error
    ///   (the planner creates inplace files, so a late writer never recreates a removed one).
    ///   The file is opened beneath `root` and never through a symlink (`StorageRoot.descriptor`).
    public func open(path: String, offset: Int64, create: Bool, root: StorageRoot) throws {
        close()
        fd = root.descriptor(path, O_WRONLY | (create ? O_CREAT : 0))
        guard fd >= 0 else {
            if errno == ENOENT && !create { throw TransferFiles.partialGone(path) }
            throw StorageRoot.openFailure(errno, doing: "open", path)
        }
        do {
            syncHandle = try SyncHandle(duplicating: fd, path: path)
        } catch {
            close()
            throw error
        }
        self.path = path
        position = offset
        buffered = 0
        bytesAccepted = 0
    }

    /// Takes bytes; they reach the file when the buffer fills, or at `sync`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var remaining = bytes
        while !remaining.isEmpty {
            let room = buffer.count - buffered
            let take = min(room, remaining.count)
            UnsafeMutableRawBufferPointer(rebasing: buffer[buffered..<(buffered + take)]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: remaining[0..<take]))
            buffered += take
            remaining = UnsafeRawBufferPointer(rebasing: remaining[take...])
            if buffered == buffer.count { try flush() }
        }
        bytesAccepted += Int64(bytes.count)
    }

    /// Writes out the buffer, so every accepted byte is in the file (not yet durable).
    public func flush() throws {
        var written = 0
        while written < buffered {
            let result = pwrite(fd, buffer.baseAddress! + written, buffered - written, off_t(position))
            if result < 0 {
                if errno == EINTR { continue }
                let error = Errno.storageError(errno, "write \(path)")
                // Keep what was not written at the front of the buffer, so a later flush writes it
                // at the right offset (`position` already counts what was written).
                if written > 0 {
                    memmove(buffer.baseAddress!, buffer.baseAddress! + written, buffered - written)
                    buffered -= written
                }
                throw error
            }
            written += result
            position += Int64(result)
        }
        buffered = 0
    }

    /// Closes the file without flushing (call `flush` first to keep the bytes).
    public func close() {
        if fd >= 0 { Foundation.close(fd) }
        fd = -1
        syncHandle = nil
        buffered = 0
    }
}
