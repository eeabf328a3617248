import CZlib
import HaulCore

/// A sequential stream of bytes that a tar reader consumes (a file, decompressed data, the body of
/// an object being read); owned by one thread.
public protocol ByteSource: AnyObject {
    /// Reads up to `count` bytes into `buffer`; returns 0 only at the end of the stream.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int
}

extension ByteSource {
    /// Reads until `count` bytes arrived or the stream ended; returns how many arrived.
    func readFully(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        var done = 0
        while done < count {
            let got = try read(into: buffer + done, count: count - done)
            if got == 0 { break }
            done += got
        }
        return done
    }
}

/// The bytes of a file from its start, read with `pread`.
final class FileSource: ByteSource {
    private let file: InputFile
    private var offset: Int64 = 0

    init(_ file: InputFile) { self.file = file }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        let got = try file.read(into: buffer, count: count, at: offset)
        offset += Int64(got)
        return got
    }
}

/// The decompressed bytes of gzip data, concatenated members included; each member's CRC-32 and length
/// are checked by zlib at its end, and anything after the last member other than another member is refused.
final class GzipSource: ByteSource {
    private let source: any ByteSource
    private let inflater = Inflater(windowBits: 31)
    private let input = UnsafeMutableRawPointer.allocate(byteCount: ioChunkSize, alignment: 16)
    private var inMember = false
    private var finished = false

    init(_ source: any ByteSource) { self.source = source }

    deinit { input.deallocate() }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        let stream = inflater.stream
        while !finished {
            if stream.pointee.avail_in == 0 {
                let got = try source.read(into: input, count: ioChunkSize)
                if got == 0 {
                    guard !inMember else { throw HaulError.corrupt("the gzip data is truncated") }
                    finished = true
                    return 0
                }
                stream.pointee.next_in = input.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_in = uInt(got)
            }
            if !inMember {
                guard stream.pointee.next_in.pointee == 0x1F else { throw HaulError.corrupt("unexpected data follows the gzip data") }
                inMember = true
            }
            stream.pointee.next_out = buffer.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(count)
            let status = inflate(stream, Z_NO_FLUSH)
            let produced = count - Int(stream.pointee.avail_out)
            if status == Z_STREAM_END {
                inMember = false
                inflater.reset()
            } else if status != Z_OK && status != Z_BUF_ERROR {
                throw HaulError.corrupt("the gzip data is invalid (\(status == Z_DATA_ERROR ? "bad data or checksum" : "zlib error \(status)"))")
            }
            if produced > 0 { return produced }
        }
        return 0
    }
}
