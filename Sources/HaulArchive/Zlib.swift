import CZlib
import HaulCore

/// A zlib inflate stream; one thread owns it at a time (it is not `Sendable`).
final class Inflater {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)

    /// `windowBits` as zlib takes it: -15 for raw deflate (zip), 31 for gzip.
    init(windowBits: Int32) {
        stream.initialize(to: z_stream())
        precondition(haul_inflateInit2(stream, windowBits) == Z_OK, "zlib inflateInit2 failed (out of memory)")
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    func reset() { inflateReset(stream) }
}

/// A zlib deflate stream; one thread owns it at a time (it is not `Sendable`).
final class Deflater {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)

    /// A raw deflate stream (zip) at `level` 1...9.
    init(level: Int32) {
        stream.initialize(to: z_stream())
        precondition(haul_deflateInit2(stream, level, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK, "zlib deflateInit2 failed (out of memory)")
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    func reset() { deflateReset(stream) }
}

/// Updates a CRC-32 with zlib's implementation.
func crc32Update(_ crc: UInt32, _ buffer: UnsafeRawPointer, _ count: Int) -> UInt32 {
    UInt32(crc32(uLong(crc), buffer.assumingMemoryBound(to: Bytef.self), uInt(count)))
}
