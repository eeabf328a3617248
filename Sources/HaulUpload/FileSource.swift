import CCurl
import Foundation
import HaulCore

/// A byte range of an ``UploadFile`` handed to libcurl by a read callback.
///
/// A failure is kept in ``failure`` and the callback aborts the transfer, so a changed file never
/// reaches the server as a complete body. Not `Sendable`: used only on the uploading thread.
final class FileSource {
    private let file: UploadFile
    private let start: Int64
    /// Bytes in the range.
    let length: Int64
    private var position: Int64 = 0
    /// Why the last read failed, if it did.
    private(set) var failure: HaulError?

    init(_ file: UploadFile, start: Int64 = 0, length: Int64? = nil) {
        self.file = file
        self.start = start
        self.length = length ?? file.size - start
    }

    /// Fills `buffer` for libcurl; returns the byte count, 0 at the end, or `nil` to abort.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int? {
        let wanted = Int(min(Int64(capacity), length - position))
        do throws(HaulError) {
            let got = try file.read(at: start + position, into: buffer, count: wanted)
            guard got == wanted else {
                throw file.changed("it became shorter")
            }
            position += Int64(got)
            if position == length { try file.checkUnchanged() }
            return got
        } catch {
            failure = error
            return nil
        }
    }

    /// Moves to `offset` within the range, as libcurl asks when it must resend; false if out of range.
    func seek(to offset: Int64) -> Bool {
        guard offset >= 0, offset <= length else { return false }
        position = offset
        return true
    }
}

extension FileSource {
    /// The `CURLOPT_READFUNCTION` / mime read callback; its context is an unretained `FileSource`.
    static let readCallback: haul_data_callback = { buffer, size, count, context in
        let source = Unmanaged<FileSource>.fromOpaque(context!).takeUnretainedValue()
        return source.read(into: UnsafeMutableRawPointer(buffer!), capacity: size * count) ?? Int(haul_readfunc_abort())
    }

    /// The matching seek callback; only `SEEK_SET` within the range succeeds.
    static let seekCallback: haul_seek_callback = { context, offset, origin in
        let source = Unmanaged<FileSource>.fromOpaque(context!).takeUnretainedValue()
        let ok = origin == SEEK_SET && source.seek(to: Int64(offset))
        return Int32(ok ? haul_seekfunc_ok() : haul_seekfunc_fail())
    }
}
