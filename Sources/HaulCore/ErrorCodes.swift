/// The error kinds Haul's modules share. A module with kinds of its own (the archive reader,
/// say) declares them in an extension beside its code.
extension HaulError.Code {
    /// Bad input on the command line or in a manifest: the process exits with status 2.
    public static let usage: Self = "usage"
    /// A bug or an impossible state: the message says what was expected.
    public static let `internal`: Self = "internal"
    /// The worker's lease on a row was taken over or reset: stop at once, write nothing more.
    public static let leaseLost: Self = "lease-lost"
    /// The operator canceled the transfer.
    public static let canceled: Self = "canceled"
    /// A graceful stop interrupted the work; another worker resumes it.
    public static let interrupted: Self = "interrupted"
    /// No transfer has that id.
    public static let noSuchTransfer: Self = "no-such-transfer"
    /// No batch has that name.
    public static let noSuchBatch: Self = "no-such-batch"
    /// An operator action that the transfer's state does not allow.
    public static let invalidTransition: Self = "invalid-transition"
    /// The database is older than this binary: run `haul migrate`.
    public static let schemaOutdated: Self = "schema-outdated"
    /// The database cannot be reached or answered with an error.
    public static let database: Self = "database"
    /// A URL that is not an absolute http(s) URL with a host.
    public static let badURL: Self = "bad-url"
    /// The origin answered with an HTTP status that is not success.
    public static let originStatus: Self = "origin-status"
    /// The origin's file changed while it was being downloaded (validator or size).
    public static let originChanged: Self = "origin-changed"
    /// The finished file's digest differs from the expected one.
    public static let checksumMismatch: Self = "checksum-mismatch"
    /// The finished file's size differs from the planned one.
    public static let sizeMismatch: Self = "size-mismatch"
    /// Part files of the parts layout vanished from storage before assembly.
    public static let partsMissing: Self = "parts-missing"
    /// Storage refused a write, a sync or a rename.
    public static let storage: Self = "storage"
    /// A transfer has no destination yet (it was never planned).
    public static let unplanned: Self = "unplanned"
}
