import HaulCore

/// What `Storage.publish` asks of the finalizer holding the transfer's lease, at the moments
/// the storage decides: the storage runs no SQL, the finalizer records under its lease.
public protocol PublishFence: AnyObject {
    /// Whether the lease was found lost (a long read stops).
    var isLost: Bool { get }
    /// Throws `lease-lost` once the lease is lost (checked while copying and hashing).
    func check() throws
    /// Renews the lease now (the fence right before the file appears).
    func renew() throws
    /// Throws `destination-exists` when what is at the name is not this transfer's to replace.
    func refuseOthers() throws
    /// Records `event` under the lease; throws `lease-lost` when the lease is gone.
    func record(_ event: PublishEvent) throws
    /// Checks `actual`, the stored bytes' digest, against the expected one.
    /// - Returns: the digest to record. - Throws: `checksum-mismatch`.
    func verify(_ actual: Checksum) throws -> String?
}

/// What a storage has the finalizer record while it publishes.
public enum PublishEvent: Sendable, Equatable {
    /// The file is about to be renamed into place: a later finalizer that finds the assembled
    /// file gone may take a file of the right size at the name for this publish.
    case publishing
    /// The multipart upload is completed: it is no longer to be aborted.
    case uploadCompleted
}

/// Thrown by `Storage.publish` when part files of these segments are gone: the finalizer
/// queues them again.
public struct PartsLost: Error {
    /// The segments' indexes.
    public let indexes: [Int]

    /// Segments `indexes` lost their parts.
    public init(indexes: [Int]) { self.indexes = indexes }
}

/// Thrown by `Storage.publish` when the digest is not the one expected and the bytes stay on
/// storage (a folder's file); `actual` is theirs.
public struct KeptMismatch: Error {
    /// The `checksum-mismatch` error.
    public let error: HaulError
    /// The digest the kept bytes have (`algorithm:hex`).
    public let actual: String

    /// A mismatch of kept bytes.
    public init(error: HaulError, actual: String) {
        self.error = error
        self.actual = actual
    }
}
