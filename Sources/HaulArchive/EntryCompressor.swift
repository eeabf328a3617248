import CZlib
import Glibc
import HaulCore

/// Deflated entry data waiting to be appended to the archive: in memory while small, else in an unlinked
/// temporary file next to the archive. Ownership passes from the compressing thread to the writing thread.
struct Spool: Sendable {
    var memory: [UInt8] = []
    var descriptor: Int32?
    var crc: UInt32 = 0
    var size: UInt64 = 0
    var compressedSize: UInt64 = 0

    /// Closes the temporary file, if any.
    func release() {
        if let descriptor { close(descriptor) }
    }
}

/// Deflates one file at a time into a `Spool`; one per thread, so each owns its zlib stream and buffers.
final class EntryCompressor {
    private static let memoryLimit = 8 << 20
    private let deflater: Deflater
    private let input = UnsafeMutableRawPointer.allocate(byteCount: ioChunkSize, alignment: 16)
    private let output = UnsafeMutableRawPointer.allocate(byteCount: ioChunkSize, alignment: 16)
    private let spoolDirectory: String

    init(level: Int32, spoolDirectory: String) {
        deflater = Deflater(level: level)
        self.spoolDirectory = spoolDirectory
    }

    deinit {
        input.deallocate()
        output.deallocate()
    }

    /// Deflates the file at `path`; returns `nil` when deflate would not make it smaller (store it instead).
    func compress(_ path: String) throws -> Spool? {
        let fd = try check("open", path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        deflater.reset()
        let stream = deflater.stream
        var spool = Spool()
        do {
            var finished = false
            while !finished {
                let got = try check("read", path) { Int32(read(fd, input, ioChunkSize)) }
                spool.crc = crc32Update(spool.crc, input, Int(got))
                spool.size += UInt64(got)
                stream.pointee.next_in = input.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_in = uInt(got)
                let flush = got == 0 ? Z_FINISH : Z_NO_FLUSH
                repeat {
                    stream.pointee.next_out = output.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = uInt(ioChunkSize)
                    let status = deflate(stream, flush)
                    try append(&spool, count: ioChunkSize - Int(stream.pointee.avail_out))
                    finished = status == Z_STREAM_END
                } while stream.pointee.avail_out == 0
            }
        } catch {
            spool.release()
            throw error
        }
        if spool.compressedSize >= spool.size && spool.size > 0 {
            spool.release()
            return nil
        }
        return spool
    }

    private func append(_ spool: inout Spool, count: Int) throws {
        guard count > 0 else { return }
        spool.compressedSize += UInt64(count)
        if spool.descriptor == nil, spool.memory.count + count <= EntryCompressor.memoryLimit {
            spool.memory.append(contentsOf: UnsafeRawBufferPointer(start: output, count: count))
            return
        }
        if spool.descriptor == nil {
            var template = Array("\(spoolDirectory)/.haul-spool-XXXXXX".utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else { throw HaulError.archiveIO("create a temporary file in", spoolDirectory, errno: errno) }
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            spool.descriptor = fd
            try spool.memory.withUnsafeBytes { try writeAll(fd, $0.baseAddress!, $0.count, path: spoolDirectory) }
            spool.memory = []
        }
        try writeAll(spool.descriptor!, output, count, path: spoolDirectory)
    }
}
