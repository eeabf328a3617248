/// A small file that a batch fetches whole, as its storage needs to know it (`BatchStore.sink`;
/// the batch's claim and plan without the queue's types).
public struct WholeFile: Sendable, Equatable {
    /// The transfer's id (for messages and its lease).
    public var transferID: Int64
    /// The destination, relative to the storage.
    public var dest: String
    /// The transfer's URL (the mark on what is stored).
    public var url: String
    /// Its size in bytes.
    public var size: Int64
    /// The origin's content type.
    public var contentType: String?
    /// The digest the transfer expects (`algorithm:hex`), if any.
    public var expectedDigest: String?
    /// The upload an earlier plan of the transfer opened (S3), which storing the file ends.
    public var earlierUploadID: String?
    /// The transfer's generation (a folder's partial file is named by it).
    public var generation: Int

    /// A whole file; see the properties.
    public init(
        transferID: Int64, dest: String, url: String, size: Int64, contentType: String?, expectedDigest: String?, earlierUploadID: String?,
        generation: Int
    ) {
        self.transferID = transferID
        self.dest = dest
        self.url = url
        self.size = size
        self.contentType = contentType
        self.expectedDigest = expectedDigest
        self.earlierUploadID = earlierUploadID
        self.generation = generation
    }
}

/// How a storage keeps the whole files of a small-file batch (`Storage.batchStore`; the
/// worker's `BatchProbe` drives it): it looks at the destinations once, gives each file a sink
/// that its response streams into, and stores the batch's files for good, fenced by the
/// batch's leases. A folder writes unnamed files and publishes them together (one sync, one
/// lease check, then the links); a bucket streams each file into one `PutObject`, which
/// checks the lease before its last byte.
///
/// The worker holds a store as `any BatchStore` and its sinks as `any WholeFileSink`: a store
/// with an associated sink type made the worker's per-file code generic over a type it cannot
/// see, run unspecialized (16 % more of the workers' CPU on 5000 small files).
public protocol BatchStore {
    /// What the log lines call a stored file ("object").
    var noun: String { get }
    /// What storing it is called in the log line of a lease lost after it.
    var storing: String { get }
    /// How many lookups run at once (each a round trip to the store).
    var lookupWidth: Int { get }
    /// Whether the batch finishes a file of `size` bytes itself (else the fetchers do).
    func takesWhole(size: Int64) -> Bool
    /// Looks once, for the whole batch, at each file's destination (`dest` `nil`: the origin
    /// names it, nothing is looked at). - Returns: the size of what is there, `nil` when nothing
    /// is or the lookup failed. What it saw is kept for `seen` and each file's `sink`.
    func lookUp(_ files: [(id: Int64, dest: String?)]) -> [Int64?]
    /// What `lookUp` found at `dest` for transfer `id`, as the occupant that `url` may or may not
    /// replace; `nil` when it found nothing there (or did not look).
    func seen(_ dest: String, of id: Int64, url: String) throws -> Occupant?
    /// Looks at `dest` for transfer `id` now (a name its origin gave, which `lookUp` could not
    /// look at), keeping the answer as `lookUp` keeps its own: the file's `sink` then never
    /// replaces anything other than what this answer says is there. - Returns: the occupant
    /// that `url` may or may not replace, `nil` when nothing is there.
    func occupant(of dest: String, for id: Int64, url: String) throws -> Occupant?
    /// Where the body of `file` goes, fenced by `fence`: it never replaces what is at the name
    /// other than what `lookUp` saw there.
    func sink(for file: WholeFile, fence: any BatchFence) throws -> any WholeFileSink
    /// Stores `files` (sinks this store made for the batch, each complete) for good.
    /// `refuseOthers` is asked of a file about to replace what is at its name, when the store's
    /// own write cannot refuse what was put there since `lookUp` (a rename replaces whatever is
    /// there; a `PutObject`'s precondition refuses it): it throws for what the transfer may not
    /// replace.
    /// - Returns: for each file, `nil` once it is stored, else why not; a file not stored is
    ///   discarded, and one whose lease is gone fails with `lease-lost`.
    /// - Throws: when the leases could not be checked at all (nothing was stored).
    func store(_ files: [any WholeFileSink], fence: any BatchFence, refuseOthers: (WholeFile) throws -> Void) throws -> [(any Error)?]
}
