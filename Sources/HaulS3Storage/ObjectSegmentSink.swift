import HaulCore
import HaulS3
import HaulStorage

/// A segment streamed into a bucket (`ObjectStore.openSegment`): a part of the transfer's
/// multipart upload, or the whole object in one `PutObject` for a file below the part minimum.
/// Nothing is stored before `finish`; a dropped part is aborted.
final class ObjectSegmentSink: SegmentSink {
    private var part: PartStream?
    private var finished = false
    let lastByteCommits: Bool

    /// A sink over the started request `part`; `wholeObject`: it is a `PutObject`.
    init(_ part: PartStream, wholeObject: Bool) {
        self.part = part
        self.lastByteCommits = wholeObject
    }

    var bytesWritten: Int64 { part?.bytesWritten ?? 0 }
    var partPath: String? { nil }
    var syncHandle: SyncHandle? { nil }

    func write(_ bytes: UnsafeRawBufferPointer, whileWaiting: () -> Bool) throws {
        try part?.write(bytes, whileWaiting: whileWaiting)
    }

    func flush() throws {}

    func finish(whileWaiting: () -> Void) throws -> SegmentReceipt {
        guard let part else { return SegmentReceipt(etag: nil) }
        let etag = try part.finish(whileWaiting: whileWaiting)
        finished = true
        return SegmentReceipt(etag: etag)
    }

    func drop() {
        if !finished { part?.abort() }
        part = nil
    }

    func close() { drop() }
}
