import HaulCore

/// The seam between the worker and where files are kept: a folder (`FolderStorage`) or an S3
/// bucket (`ObjectStore`, in HaulS3Storage). Callers ask this protocol instead of asking which
/// storage they have; where backends truly differ, a `StorageFeatures` flag says how. The
/// storage runs no SQL: what must be recorded is returned to the caller, which records it
/// under its lease.
public protocol Storage: Sendable {
    /// The storage as transfers record it: `s3://BUCKET/PREFIX` or `file:///ROOT` (no
    /// credential, no endpoint).
    var identity: String { get }
    /// What this storage can and cannot do.
    var features: StorageFeatures { get }
    /// Where destination `dest` is, for messages and `--json` (`/root/dest`, `s3://bucket/key`);
    /// of `""`, the storage itself.
    func describe(_ dest: String) -> String
    /// What is at `dest` now, `nil` when nothing is (for `-N`, `--continue` and the "never
    /// overwrite others' files" rule). Throws when the storage cannot be asked.
    func probe(_ dest: String) throws -> StoredFile?
    /// What is at `dest` and what its mark says of `url` (for the "never overwrite others'
    /// files" rule, `OthersFiles`), `nil` when nothing is there; a symbolic link or a folder
    /// counts as something. Throws when the storage cannot be asked.
    func occupant(of dest: String, url: String) throws -> Occupant?
    /// What is at `dest` when it is a file of `size` bytes that nothing changed since Haul
    /// published it (on a folder, its seal holds; an object is never changed in place), with what
    /// its mark says of `url`; `nil` otherwise. For trusting a recorded version (`-N` baselines).
    /// Throws when the storage cannot be asked.
    func unchangedFile(at dest: String, size: Int64, url: String) throws -> Occupant?
    /// The file at `dest` as a local file for what needs a path (`--upload-to`): the file itself
    /// on a folder, a copy read back into the private scratch folder from a bucket. Stops (and
    /// removes a copy) once `shouldStop` says so.
    func readBack(_ dest: String, shouldStop: @escaping @Sendable () -> Bool) throws -> LocalCopy
    /// The length of a plan's first segment for a transfer of segment size `requested`: that
    /// size on a folder, within a part's limits in a bucket.
    func firstSegment(requested: Int64) -> Int64
    /// The length of the segments past the first that this storage takes for `file` (it cuts
    /// them again to it), `nil` when the plan's own lengths stand (a folder takes any).
    /// - Throws: when the storage cannot hold the file at all (a bucket: of unknown length, over
    ///   5 TiB, or over 5 GiB from an origin without ranges), before anything is opened.
    func segmentLength(for file: SegmentedFile) throws -> Int64?
    /// Extracts the published archive under its folder (`--extract`), under the same
    /// hostile-archive rules everywhere; a folder that holds files, or a prefix that holds
    /// objects, is refused. A storage that writes entries as they arrive records each in
    /// `journal` first and removes what an earlier attempt recorded. Stops once `shouldCancel`
    /// says so. - Returns: the files written.
    func extract(_ request: ExtractionRequest, journal: any ExtractionJournal, shouldCancel: @escaping @Sendable () -> Bool) throws -> Int
    /// Removes the file at `dest` (`--delete-after-upload`); nothing there is no error.
    func discard(_ dest: String) throws
    /// Readies `file` for its segments before its plan is written: sizes its partial file
    /// (layout `inplace`), or opens its multipart upload, aborting one an earlier plan opened.
    /// `intend` is told first what is about to be made (`StorageIntent`), so that a sweep knows
    /// it for Haul's own should this die before it is recorded.
    /// - Returns: what to record under the planning lease.
    func prepare(_ file: PlannedFile, intend: (StorageIntent) throws -> Void) throws -> PreparedFile
    /// Undoes what `prepare` made when its record failed (the lease was lost): aborts the upload.
    func abandon(_ prepared: PreparedFile)
    /// The uploads open under the storage (`openUploads` feature), for the sweep of those no
    /// transfer will complete; `nil` on a storage without them.
    func openUploads() throws -> OpenUploads?
    /// Aborts upload `uploadID`, which a transfer recorded for destination `dest`.
    func abortUpload(_ uploadID: String, dest: String) throws
    /// Aborts `upload`, which `openUploads` listed.
    func abortUpload(_ upload: OpenUpload) throws
    /// What keeps a small-file batch's whole files (`BatchStore`), one per batch: a folder's
    /// partial files synced together and renamed into place once the leases are confirmed, a
    /// bucket's `PutObject`s.
    func batchStore() -> any BatchStore
    /// Opens where segment `target`'s bytes go, from its resume point (`target.resumeAt`; a
    /// storage with `atomicSegments` is given 0). `writer` is the lane's reusable buffered
    /// writer, which a storage of files writes through.
    func openSegment(_ target: SegmentTarget, writer: SegmentWriter) throws -> any SegmentSink
    /// Puts finished `file` in place under its name, atomically: nothing is visible at the name
    /// before, the exact bytes after. Its size (and digest, when asked) is verified; what is at
    /// the name and not this transfer's to replace is refused (`fence.refuseOthers`). What must
    /// be recorded meanwhile goes to `fence.record`. - Returns: the digest to record.
    /// - Throws: `PartsLost` when stored pieces are gone (their segments are fetched again),
    ///   `KeptMismatch` or `checksum-mismatch` when the digest differs.
    func publish(_ file: FinishedFile, fence: any PublishFence) throws -> String?
}

/// The ways storage backends differ, each named for what a caller does about it.
public struct StorageFeatures: OptionSet, Sendable {
    public let rawValue: Int

    /// A set of features from its bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// A segment is stored whole or not at all (an S3 part, a `PutObject`): a resumed segment
    /// sends its bytes again from its first one.
    public static let atomicSegments = StorageFeatures(rawValue: 1 << 0)
    /// The files are on this host's file system, whose free space bounds a plan. Without it,
    /// only what is spooled locally (an archive to extract) takes local space.
    public static let localSpace = StorageFeatures(rawValue: 1 << 1)
    /// A published file can be written in place later (a POSIX file), so its seal is checked
    /// before a recorded version is trusted; an object is never changed in place.
    public static let editableInPlace = StorageFeatures(rawValue: 1 << 2)
    /// Every transfer is laid out as one multipart upload (`StorageLayout.s3`), whatever layout
    /// it asked for.
    public static let objectLayout = StorageFeatures(rawValue: 1 << 3)
    /// Transfers leave uploads open (S3 multipart uploads) until they publish: those of stopped
    /// transfers, and orphans nobody recorded, are swept (`openUploads`, `abortUpload`).
    public static let openUploads = StorageFeatures(rawValue: 1 << 4)
}

/// What a probe found at a name.
public struct StoredFile: Sendable, Equatable {
    /// Its size in bytes.
    public let size: Int64
    /// When it was last written (an HTTP date: a file's modification time, an object's
    /// `Last-Modified`), if known.
    public let lastModified: String?

    /// A probe's finding.
    public init(size: Int64, lastModified: String?) {
        self.size = size
        self.lastModified = lastModified
    }
}

/// What is at a name, as the rule against overwriting others' files sees it.
public struct Occupant: Sendable, Equatable {
    /// Where it is (`Storage.describe`).
    public let location: String
    /// What its mark says of the URL asked about (`SourceMark`; in a bucket, `ObjectSourceMark`).
    public let mark: SourceMark.Reading
    /// Whether it is a folder, which publishing never replaces.
    public let isFolder: Bool

    /// An occupant at `location`.
    public init(location: String, mark: SourceMark.Reading, isFolder: Bool) {
        self.location = location
        self.mark = mark
        self.isFolder = isFolder
    }
}

/// A stored file as a local path (`Storage.readBack`); `remove()` deletes it when it is a copy.
public struct LocalCopy: Sendable {
    /// The local file.
    public let path: String
    private let removal: @Sendable () -> Void

    /// `path`, with `remove` to delete it when done (nothing for the stored file itself).
    public init(path: String, remove: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.removal = remove
    }

    /// Deletes the copy (never the stored file itself).
    public func remove() { removal() }
}
