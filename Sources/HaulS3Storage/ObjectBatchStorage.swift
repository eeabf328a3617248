import Foundation
import HaulCore
import HaulQueue
import HaulS3
import Synchronization

/// `BatchProbe` on S3 storage: a file below S3's part minimum that its probe's response holds
/// whole streams from that response straight into one `PutObject` (nothing spooled, a few
/// hundred KiB of socket buffer per file), and the batch records it done with the others.
///
/// The fence of each `PutObject`: its last byte goes out only when this worker knows that it
/// still holds the planning lease, from a renewal the database confirmed less than half a lease
/// ago (`BatchLeases.isHeld`, on the monotonic clock: a worker that was frozen finds its renewal
/// stale, asks again and learns that the lease is gone). The request's precondition
/// (`S3Precondition`) covers a freeze between that check and the last byte: it never replaces
/// an object other than the one the batch's lookup saw, the one its ownership was checked on.
public struct ObjectBatchStorage {
    let store: ObjectStore
    let leases: any BatchFence
    /// Throws `destination-exists` when the object at a destination (as the lookup saw it) is
    /// not the claim's to replace.
    let refuse: (String, TransferLeases.Claim, S3Client.ObjectHead?) throws -> Void
    /// What `lookUp` found, by transfer id.
    private let seen = SeenObjects()

    /// The batch storage of `store`, fenced by `leases`.
    public init(store: ObjectStore, leases: any BatchFence, refuse: @escaping (String, TransferLeases.Claim, S3Client.ObjectHead?) throws -> Void) {
        self.store = store
        self.leases = leases
        self.refuse = refuse
    }

    /// How many lookups run at once: each is a round trip to the store that waits on the
    /// network, a few milliseconds each even on a local network, so one after another a batch
    /// of a thousand files would wait seconds before its first request.
    public static let lookupWidth = 16

    public var noun: String { "object" }
    public var storing: String { "storing the object" }

    public func takesWhole(size: Int64) -> Bool {
        size < S3PartRules.minimumPart
    }

    /// A `HeadObject` per named destination, `lookupWidth` at a time. The one answer serves the
    /// size, the ownership check (`refuseOthers`) and the `PutObject`'s precondition (`sink`).
    /// A lookup that fails counts as nothing seen: the `PutObject` then looks the object up itself.
    public func lookUp(_ claims: [TransferLeases.Claim]) -> [Int64?] {
        let store = store
        let found = Concurrently.map(claims.count, width: Self.lookupWidth) { index -> SeenObjects.Seen? in
            guard let dest = claims[index].info.dest, let key = try? store.key(for: dest) else { return nil }
            do {
                return SeenObjects.Seen(dest: dest, head: try store.client.objectHead(bucket: store.location.bucket, key: key))
            } catch {
                return nil
            }
        }
        seen.keep(zip(claims, found).compactMap { claim, seen in seen.map { (claim.info.id, $0) } })
        return found.map { $0?.head?.size }
    }

    public func refuseOthers(_ dest: String, of claim: TransferLeases.Claim) throws {
        try refuse(dest, claim, seen.at(dest, of: claim.info.id)?.head)
    }

    public func sink(for plan: TransferLeases.Plan, of claim: TransferLeases.Claim) throws -> ObjectPut {
        let object = seen.at(plan.dest, of: claim.info.id)
        return try ObjectPut(plan: plan, of: claim, store: store, leases: leases, seen: object.flatMap { S3Precondition.seen($0.head) })
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
public final class ObjectPut {
    private let claim: TransferLeases.Claim
    private let store: ObjectStore
    private let leases: any BatchFence
    private let key: String
    /// The object as the batch's lookup saw it, which the request must still find; `nil`: it looks first.
    private let seen: S3Precondition?
    /// The origin's `Content-Type`.
    private let contentType: String?
    private var upload: PartStream?
    private var heldByte: UInt8?

    init(plan: TransferLeases.Plan, of claim: TransferLeases.Claim, store: ObjectStore, leases: any BatchFence, seen: S3Precondition?) throws {
        self.claim = claim
        self.store = store
        self.leases = leases
        self.seen = seen
        contentType = plan.contentType
        key = try store.key(for: plan.dest)
        if let size = plan.size, size > 0 {
            upload = try PartStream.putObject(
                client: store.client, bucket: store.location.bucket, key: key, length: size, seen: seen,
                sha256: ObjectPart.expectedSHA256(claim.info), contentType: contentType, metadata: ObjectSourceMark.metadata(for: claim.info.url))
        }
    }

    /// Streams bytes into the `PutObject`, keeping the object's last byte back.
    public func write(_ bytes: UnsafeRawBufferPointer, completing: Bool) throws {
        guard let upload else { throw HaulError(.`internal`, "transfer \(claim.info.id) has bytes but no upload") }
        try upload.write(completing ? UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 1)]) : bytes) { [leases, claim] in
            leases.renewIfDue()
            return leases.isHeld(claim.info.id)
        }
        if completing { heldByte = bytes[bytes.count - 1] }
    }

    /// The fence: once the lease is confirmed held, sends the last byte (or starts an empty
    /// file's `PutObject`); the answer is read in `settle`, so that the batch goes on meanwhile.
    public func complete() throws {
        guard leases.isHeld(claim.info.id) else { throw HaulError(.leaseLost, "another worker holds transfer \(claim.info.id) now") }
        if let byte = heldByte {
            try withUnsafeBytes(of: byte) { bytes in try upload?.write(bytes) { true } }
        } else {
            upload = try PartStream.putObject(
                client: store.client, bucket: store.location.bucket, key: key, length: 0, seen: seen, contentType: contentType,
                metadata: ObjectSourceMark.metadata(for: claim.info.url))
        }
    }

    /// Waits for the `PutObject`'s answer.
    public func settle() throws {
        guard let upload else { return }
        _ = try upload.finish {}
        self.upload = nil
        if let earlier = claim.info.objectUploadID {
            // A restarted transfer that had been cut into parts: its multipart upload goes.
            try? store.client.abortUpload(bucket: store.location.bucket, key: key, uploadID: earlier)
        }
    }

    /// Stops the `PutObject` without completing it: nothing is stored.
    public func discard() {
        upload?.abort()
        upload = nil
        heldByte = nil
    }
}
