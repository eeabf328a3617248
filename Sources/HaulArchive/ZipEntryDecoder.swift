import CZlib
import HaulCore

/// Decodes zip entry data in fixed-size chunks; one per thread, so each owns its buffers and inflate stream.
final class ZipEntryDecoder {
    private let input = UnsafeMutableRawPointer.allocate(byteCount: ioChunkSize, alignment: 16)
    private let output = UnsafeMutableRawPointer.allocate(byteCount: ioChunkSize, alignment: 16)
    private let inflater = Inflater(windowBits: -15)

    deinit {
        input.deallocate()
        output.deallocate()
    }

    /// Streams the entry's bytes to `sink`, checking its size and CRC-32 before returning.
    ///
    /// - Throws: `zip-bomb` as soon as the output passes the declared size, `corrupt-archive` for bad data or CRC.
    func decode(_ plan: ZipEntryPlan, from file: InputFile, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        var crc: UInt32 = 0
        var produced: UInt64 = 0
        let emit = { (buffer: UnsafeRawPointer, count: Int) throws in
            produced += UInt64(count)
            guard produced <= plan.size else {
                throw HaulError(
                    HaulError.Code.zipBomb,
                    "refusing archive: entry '\(HaulError.printable(plan.path))' inflates past its declared size of \(plan.size) bytes",
                    hint: "the archive is damaged or a zip bomb; nothing was kept")
            }
            crc = crc32Update(crc, buffer, count)
            try sink(UnsafeRawBufferPointer(start: buffer, count: count))
        }
        if plan.method == 0 {
            try copyStored(plan, from: file, emit: emit)
        } else {
            try inflate(plan, from: file, emit: emit)
        }
        guard produced == plan.size else { throw HaulError.corrupt("entry '\(HaulError.printable(plan.path))' is shorter than its declared size") }
        guard crc == plan.crc else { throw HaulError.corrupt("entry '\(HaulError.printable(plan.path))' fails its CRC-32 check") }
    }

    private func copyStored(_ plan: ZipEntryPlan, from file: InputFile, emit: (UnsafeRawPointer, Int) throws -> Void) throws {
        var offset = plan.dataOffset
        let end = plan.dataOffset + plan.compressedSize
        while offset < end {
            let want = Int(min(UInt64(ioChunkSize), end - offset))
            let got = try file.read(into: input, count: want, at: Int64(offset))
            guard got == want else { throw HaulError.corrupt("entry '\(HaulError.printable(plan.path))' is truncated") }
            try emit(input, got)
            offset += UInt64(got)
        }
    }

    private func inflate(_ plan: ZipEntryPlan, from file: InputFile, emit: (UnsafeRawPointer, Int) throws -> Void) throws {
        inflater.reset()
        let stream = inflater.stream
        var offset = plan.dataOffset
        let end = plan.dataOffset + plan.compressedSize
        while true {
            if stream.pointee.avail_in == 0, offset < end {
                let want = Int(min(UInt64(ioChunkSize), end - offset))
                let got = try file.read(into: input, count: want, at: Int64(offset))
                guard got == want else { throw HaulError.corrupt("entry '\(HaulError.printable(plan.path))' is truncated") }
                offset += UInt64(got)
                stream.pointee.next_in = input.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_in = uInt(got)
            }
            stream.pointee.next_out = output.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(ioChunkSize)
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            let count = ioChunkSize - Int(stream.pointee.avail_out)
            if count > 0 { try emit(output, count) }
            if status == Z_STREAM_END { return }
            if status == Z_BUF_ERROR, stream.pointee.avail_in == 0, offset >= end {
                throw HaulError.corrupt("the deflate data of '\(HaulError.printable(plan.path))' ends early")
            }
            guard status == Z_OK || status == Z_BUF_ERROR else {
                throw HaulError.corrupt("the deflate data of '\(HaulError.printable(plan.path))' is invalid")
            }
        }
    }
}
