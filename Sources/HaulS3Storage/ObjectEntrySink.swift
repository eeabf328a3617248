import CLinux
import Foundation
import HaulArchive
import HaulCore
import HaulS3
import HaulStorage

/// Extraction into a bucket: each file entry becomes the object `PREFIX/FOLDER/PATH`, streamed as
/// it is decompressed. An entry up to one part long is one `PutObject`; a longer one a multipart
/// upload, one part at a time, so memory stays at one part per writing thread (8 MiB, more only
/// for entries too large for 10 000 such parts). Directories need no objects; symlinks are refused.
///
/// Every key is recorded (in `journal`, under the finalizing lease) before its first byte is
/// sent, and so is a multipart upload while it is open, so that whoever cleans up after a
/// failure or a crash knows every object to delete and every upload to abort, and the sweep of
/// uploads nobody owns leaves a long entry's upload alone.
final class ObjectEntrySink: EntrySink, @unchecked Sendable {
    let client: S3Client
    let bucket: String
    /// The key prefix of the extraction (storage prefix and extract-to folder).
    let prefix: S3Location
    /// Where keys and open uploads are recorded.
    let journal: any ExtractionJournal
    /// Stops the extraction between parts (the worker stops, or the lease was lost).
    let shouldCancel: @Sendable () -> Bool
    /// Names claimed so far, to refuse a file where a directory is and the reverse, as on disk.
    private let names = EntryNames()
    /// Parts are cut at this size unless an entry is too large for 10 000 of them.
    static let partSize: Int64 = 8 << 20
    /// Entries of a zip file written at once (each holds up to one part in memory).
    let concurrency = 2
    /// An object has no holes: a sparse entry's are sent as zeros.
    let keepsHoles = false

    init(client: S3Client, prefix: S3Location, journal: any ExtractionJournal, shouldCancel: @escaping @Sendable () -> Bool) {
        self.client = client
        self.bucket = prefix.bucket
        self.prefix = prefix
        self.journal = journal
        self.shouldCancel = shouldCancel
    }

    func makeDirectory(_ path: String, modificationTime: Int64?) throws {
        try names.claimDirectory(path)
    }

    func createFile(_ path: String, sizeBound: Int64, executable: Bool, modificationTime: Int64) throws -> any EntryWriter {
        let key = prefix.key(for: path)
        if let problem = S3KeyRules.problem(with: key) {
            throw HaulError(
                HaulError.Code.unsafeEntryName,
                "refusing archive: entry '\(HaulError.printable(path))' would be the S3 key '\(HaulError.printable(key))', which \(problem)",
                hint: S3KeyRules.hint)
        }
        try names.claimFile(path)
        guard try journal.record(key) else { throw Self.leaseLost }
        let partSize = S3PartRules.partSize(fileSize: sizeBound, requested: Self.partSize)
        return try ObjectEntryWriter(sink: self, key: key, partSize: partSize)
    }

    static let leaseLost = HaulError(.leaseLost, "the finalizing lease was lost while extracting")

    func createSymlink(_ path: String, target: String) throws {
        throw HaulError(
            HaulError.Code.symlinkRefused, "refusing archive: entry '\(HaulError.printable(path))' is a symlink, which S3 storage cannot hold",
            hint: "extract it on a POSIX storage root, or repack it without symlinks")
    }
}

/// One entry's object: bytes gather in an in-memory file of one part; a full part is sent (and
/// retried from memory on a transient failure), the rest goes out with `finish`.
final class ObjectEntryWriter: EntryWriter {
    private let sink: ObjectEntrySink
    private let key: String
    private let partSize: Int64
    private let fd: Int32
    /// Bytes written to the entry so far (the next offset).
    private var end: Int64 = 0
    /// Bytes held in the in-memory file.
    private var held: Int64 = 0
    private var uploadID: String?
    private var parts: [(number: Int, etag: String)] = []

    init(sink: ObjectEntrySink, key: String, partSize: Int64) throws {
        let fd = haul_memfd_create("haul-entry")
        guard fd >= 0 else { throw HaulError(.storage, "cannot create an in-memory buffer: \(String(cString: strerror(errno)))") }
        self.sink = sink
        self.key = key
        self.partSize = partSize
        self.fd = fd
    }

    deinit { close(fd) }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        if offset > end { try fillZeros(offset - end) }
        var done = 0
        while done < bytes.count {
            let count = Int(min(Int64(bytes.count - done), partSize - held))
            try hold(UnsafeRawBufferPointer(rebasing: bytes[done..<done + count]))
            done += count
        }
    }

    func finish(size: Int64) throws {
        if size > end { try fillZeros(size - end) }
        let bucket = sink.bucket
        if let uploadID {
            do {
                if held > 0 { try sendPart() }
                _ = try sink.client.completeUpload(bucket: bucket, key: key, uploadID: uploadID, parts: parts)
                self.uploadID = nil
                // Best effort: a record left behind names an upload that is no longer open.
                _ = try? sink.journal.recordUpload(key, uploadID: nil)
            } catch {
                abort()
                throw error
            }
        } else {
            let length = held
            try ObjectUpload.retrying(shouldStop: sink.shouldCancel) {
                lseek(fd, 0, SEEK_SET); try sink.client.putObject(bucket: bucket, key: key, fd: fd, length: length)
            }
        }
    }

    func abort() {
        if let uploadID {
            try? sink.client.abortUpload(bucket: sink.bucket, key: key, uploadID: uploadID)
            _ = try? sink.journal.recordUpload(key, uploadID: nil)
        }
        uploadID = nil
    }

    /// Starts the entry's multipart upload and records it before any part is sent; an upload
    /// that could not be recorded is aborted at once.
    private func openUpload() throws {
        let opened = try sink.client.createUpload(bucket: sink.bucket, key: key)
        do {
            guard try sink.journal.recordUpload(key, uploadID: opened) else { throw ObjectEntrySink.leaseLost }
        } catch {
            try? sink.client.abortUpload(bucket: sink.bucket, key: key, uploadID: opened)
            throw error
        }
        uploadID = opened
    }

    private func fillZeros(_ count: Int64) throws {
        let zeros = [UInt8](repeating: 0, count: 1 << 16)
        var left = count
        while left > 0 {
            let piece = Int(min(left, Int64(zeros.count)))
            try zeros.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[0..<piece]), at: end) }
            left -= Int64(piece)
        }
    }

    /// Appends to the in-memory file (at most what fits in the part), sending the part once full.
    private func hold(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let wrote = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if wrote < 0 {
                if errno == EINTR { continue }
                throw HaulError(.storage, "cannot buffer an entry in memory: \(String(cString: strerror(errno)))")
            }
            done += wrote
        }
        held += Int64(bytes.count)
        end += Int64(bytes.count)
        if held == partSize {
            if sink.shouldCancel() { throw HaulError(.canceled, "the extraction to s3://\(sink.bucket)/\(key) was stopped", transient: true) }
            if uploadID == nil { try openUpload() }
            try sendPart()
        }
    }

    /// Sends what is held as the next part, and empties the in-memory file.
    private func sendPart() throws {
        guard let uploadID else { return }
        let (bucket, key, number, length) = (sink.bucket, key, parts.count + 1, held)
        let etag = try ObjectUpload.retrying(shouldStop: sink.shouldCancel) { () -> String in
            lseek(fd, 0, SEEK_SET)
            return try sink.client.uploadPart(
                bucket: bucket, key: key, uploadID: uploadID, number: number, length: length, feed: ByteFeed(fd: fd, limit: length))
        }
        parts.append((number, etag))
        guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw HaulError(.storage, "cannot reuse an in-memory buffer: \(String(cString: strerror(errno)))")
        }
        held = 0
    }
}
