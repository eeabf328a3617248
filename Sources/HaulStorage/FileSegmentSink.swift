import HaulCore

/// A segment written into a file of a folder (`FolderStorage.openSegment`) through the lane's
/// reusable buffered `SegmentWriter`.
final class FileSegmentSink: SegmentSink {
    private let writer: SegmentWriter
    let partPath: String?

    /// A sink over `writer`, already open at the segment's resume point.
    init(writer: SegmentWriter, partPath: String?) {
        self.writer = writer
        self.partPath = partPath
    }

    var bytesWritten: Int64 { writer.bytesAccepted }
    var lastByteCommits: Bool { false }
    var syncHandle: SyncHandle? { writer.syncHandle }

    func write(_ bytes: UnsafeRawBufferPointer, whileWaiting: () -> Bool) throws { try writer.write(bytes) }
    func flush() throws { try writer.flush() }
    func finish(whileWaiting: () -> Void) throws -> SegmentReceipt { SegmentReceipt(etag: nil) }
    func drop() {}
    func close() { writer.close() }
}
