import Foundation
import HaulCore
import HaulS3
import HaulStorage
import Synchronization

/// The small-file batch (`BatchStore`, the worker's `BatchProbe`) on S3 storage: a file below
/// S3's part minimum that its probe's response holds whole streams from that response straight into one `PutObject` (nothing spooled, a few
/// hundred KiB of socket buffer per file), and the batch records it done with the others.
///
/// The fence of each `PutObject`: its last byte goes out only when this worker knows that it
/// still holds the planning lease, from a renewal the database confirmed less than half a lease
/// ago (`BatchLeases.isHeld`, on the monotonic clock: a worker that was frozen finds its renewal
/// stale, asks again and learns that the lease is gone). The request's precondition
/// (`S3Precondition`) covers a freeze between that check and the last byte: it never replaces
/// an object other than the one the batch's lookup saw, the one its ownership was checked on.
struct ObjectBatchStorage: BatchStore {
    let store: ObjectStore
    /// What `lookUp` found, by transfer id.
    private let seen = SeenObjects()

    /// The batch storage of `store`.
    init(store: ObjectStore) {
        self.store = store
    }

    /// How many lookups run at once: each is a round trip to the store that waits on the
    /// network, a few milliseconds each even on a local network, so one after another a batch
    /// of a thousand files would wait seconds before its first request.
    var lookupWidth: Int { 16 }

    var noun: String { "object" }
    var storing: String { "storing the object" }

    func takesWhole(size: Int64) -> Bool {
        size < S3PartRules.minimumPart
    }

    /// A `HeadObject` per named destination, `lookupWidth` at a time. The one answer serves the
    /// size, the ownership check (`seen`) and the `PutObject`'s precondition (`sink`).
    /// A lookup that fails counts as nothing seen: the `PutObject` then looks the object up itself.
    func lookUp(_ files: [(id: Int64, dest: String?)]) -> [Int64?] {
        let store = store
        let found = Concurrently.map(files.count, width: lookupWidth) { index -> SeenObjects.Seen? in
            guard let dest = files[index].dest, let key = try? store.key(for: dest) else { return nil }
            do {
                return SeenObjects.Seen(dest: dest, head: try store.client.objectHead(bucket: store.location.bucket, key: key))
            } catch {
                return nil
            }
        }
        seen.keep(zip(files, found).compactMap { file, seen in seen.map { (file.id, $0) } })
        return found.map { $0?.head?.size }
    }

    func seen(_ dest: String, of id: Int64, url: String) throws -> Occupant? {
        guard let head = seen.at(dest, of: id)?.head else { return nil }
        return try store.occupant(head, of: dest, url: url)
    }

    /// One `HeadObject`, whose answer also serves the `PutObject`'s precondition: the object the
    /// get's refusal judged is the one the `PutObject` may replace (looked up again there, an
    /// object put in between would be replaced unjudged), and a file costs one lookup, not two.
    func occupant(of dest: String, for id: Int64, url: String) throws -> Occupant? {
        let head = try store.client.objectHead(bucket: store.location.bucket, key: try store.key(for: dest))
        seen.keep([(id, SeenObjects.Seen(dest: dest, head: head))])
        return try head.map { try store.occupant($0, of: dest, url: url) }
    }

    func sink(for file: WholeFile, fence: any BatchFence) throws -> any WholeFileSink {
        let object = seen.at(file.dest, of: file.transferID)
        return try ObjectPut(file, store: store, fence: fence, seen: object.flatMap { S3Precondition.seen($0.head) })
    }

    /// Waits for each file's `PutObject`, fenced already (`ObjectPut.complete`). `refuseOthers`
    /// is not asked: each request's precondition refuses an object put since the lookup, which
    /// the batch judged (`seen`).
    func store(_ files: [any WholeFileSink], fence: any BatchFence, refuseOthers: (WholeFile) throws -> Void) -> [(any Error)?] {
        files.map { file in
            do {
                guard let put = file as? ObjectPut else {
                    throw HaulError(.internal, "transfer \(file.file.transferID)'s file is not a PutObject of this bucket")
                }
                try put.settle()
                return nil
            } catch {
                file.discard()
                return error
            }
        }
    }
}

/// The objects a batch's lookup found at its destinations (`ObjectBatchStorage.lookUp`),
/// written by the lookup's threads and read by the lane.
final class SeenObjects: Sendable {
    /// The object at `dest` as a lookup answered: its head, `nil` when there was none.
    struct Seen: Sendable {
        let dest: String
        let head: S3Client.ObjectHead?
    }

    private let seen = Mutex<[Int64: Seen]>([:])

    func keep(_ found: [(Int64, Seen)]) {
        seen.withLock { seen in for (id, object) in found { seen[id] = object } }
    }

    /// What the lookup saw at `dest` for transfer `id`; `nil` when it did not look there.
    func at(_ dest: String, of id: Int64) -> Seen? {
        seen.withLock { $0[id] }.flatMap { $0.dest == dest ? $0 : nil }
    }
}

/// A whole file streaming into its `PutObject`, which keeps the object's last byte back until
/// the lease is confirmed (an empty file's request starts only then).
final class ObjectPut: WholeFileSink {
    let file: WholeFile
    private let store: ObjectStore
    private let fence: any BatchFence
    private let key: String
    /// The object as the batch's lookup saw it, which the request must still find; `nil`: it looks first.
    private let seen: S3Precondition?
    private var upload: PartStream?
    private var heldByte: UInt8?

    init(_ file: WholeFile, store: ObjectStore, fence: any BatchFence, seen: S3Precondition?) throws {
        self.file = file
        self.store = store
        self.fence = fence
        self.seen = seen
        key = try store.key(for: file.dest)
        if file.size > 0 {
            upload = try PartStream.putObject(
                client: store.client, bucket: store.location.bucket, key: key, length: file.size, seen: seen,
                sha256: ObjectPart.expectedSHA256(file.expectedDigest), contentType: file.contentType,
                metadata: ObjectSourceMark.metadata(for: file.url))
        }
    }

    /// Streams bytes into the `PutObject`, keeping the object's last byte back.
    func write(_ bytes: UnsafeRawBufferPointer, completing: Bool) throws {
        guard let upload else { throw HaulError(.`internal`, "transfer \(file.transferID) has bytes but no upload") }
        try upload.write(completing ? UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 1)]) : bytes) { [fence, file] in
            fence.renewIfDue()
            return fence.isHeld(file.transferID)
        }
        if completing { heldByte = bytes[bytes.count - 1] }
    }

    /// The fence: once the lease is confirmed held, sends the last byte (or starts an empty
    /// file's `PutObject`); the answer is read in `settle`, so that the batch goes on meanwhile.
    func complete() throws {
        guard fence.isHeld(file.transferID) else { throw HaulError(.leaseLost, "another worker holds transfer \(file.transferID) now") }
        if let byte = heldByte {
            try withUnsafeBytes(of: byte) { bytes in try upload?.write(bytes) { true } }
        } else {
            upload = try PartStream.putObject(
                client: store.client, bucket: store.location.bucket, key: key, length: 0, seen: seen, contentType: file.contentType,
                metadata: ObjectSourceMark.metadata(for: file.url))
        }
    }

    /// Waits for the `PutObject`'s answer.
    func settle() throws {
        guard let upload else { return }
        _ = try upload.finish {}
        self.upload = nil
        if let earlier = file.earlierUploadID {
            // A restarted transfer that had been cut into parts: its multipart upload goes.
            try? store.client.abortUpload(bucket: store.location.bucket, key: key, uploadID: earlier)
        }
    }

    /// Stops the `PutObject` without completing it: nothing is stored.
    func discard() {
        upload?.abort()
        upload = nil
        heldByte = nil
    }
}
