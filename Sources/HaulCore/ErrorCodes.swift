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

/// Refusals and failures of the command line and the queue.
extension HaulError.Code {
    /// An operator action raced a worker: the row changed state meanwhile.
    public static let conflict: Self = "conflict"
    /// `haul get` would overwrite a file it did not write (exit 2; `--force` overwrites).
    public static let destinationExists: Self = "destination-exists"
    /// Another active transfer already writes that destination (exit 2).
    public static let destinationBusy: Self = "destination-busy"
    /// Planning or finalizing was started more often than the attempts allow without an outcome.
    public static let abandoned: Self = "abandoned"
    /// A download's partial file vanished from storage.
    public static let partialMissing: Self = "partial-missing"
    /// A download's partial file was written by a download of another URL meanwhile.
    public static let partialOverwritten: Self = "partial-overwritten"
    /// The parts layout's recorded parts leave a gap in the file.
    public static let partsGap: Self = "parts-gap"
    /// A recorded part file is shorter than its recorded length.
    public static let partsShort: Self = "parts-short"
    /// A path read back from the database breaks the storage root's rules, or a link was planted.
    public static let unsafePath: Self = "unsafe-path"
    /// The storage root does not exist (and `--create-storage` was not given).
    public static let storageMissing: Self = "storage-missing"
    /// A file, body or archive bigger than a limit allows (`--max-file-size`, `--max-size`).
    public static let tooLarge: Self = "too-large"
    /// The storage has no room for the file now; retried with backoff.
    public static let storageFull: Self = "storage-full"
    /// The storage root refuses this user.
    public static let storagePermission: Self = "storage-permission"
    /// A file to upload could not be read.
    public static let fileUnreadable: Self = "file-unreadable"
    /// A file changed while it was being uploaded.
    public static let fileChanged: Self = "file-changed"
}

/// What origins and upload servers do wrong, and what the network does to a request.
extension HaulError.Code {
    /// The host name did not resolve.
    public static let dns: Self = "dns"
    /// The connection was refused or timed out.
    public static let connect: Self = "connect"
    /// The peer reset the connection.
    public static let connectionReset: Self = "connection-reset"
    /// Another network failure (transient).
    public static let network: Self = "network"
    /// A TLS handshake failed.
    public static let tls: Self = "tls"
    /// The peer's certificate could not be verified.
    public static let tlsVerify: Self = "tls-verify"
    /// No byte arrived for the stall timeout.
    public static let stalled: Self = "stalled"
    /// A libcurl failure with no better name; the message says which.
    public static let curl: Self = "curl"
    /// A malformed HTTP exchange.
    public static let http: Self = "http"
    /// The origin answered 404 or 410.
    public static let notFound: Self = "not-found"
    /// The response ended before the bytes it announced.
    public static let shortBody: Self = "short-body"
    /// The response went on past the bytes asked for.
    public static let longBody: Self = "long-body"
    /// The response ended before it was complete.
    public static let incomplete: Self = "incomplete"
    /// A 206 for other bytes than asked, with unchanged validators: retried.
    public static let badContentRange: Self = "bad-content-range"
    /// An origin whose answer breaks a limit (a response head too big).
    public static let badOrigin: Self = "bad-origin"
    /// An upload server whose answer cannot be used (a tus `Location` off its origin, say).
    public static let badServer: Self = "bad-server"
    /// The server answered 5xx; retried.
    public static let serverError: Self = "server-error"
    /// The upload server refused the upload (4xx).
    public static let uploadRejected: Self = "upload-rejected"
    /// The upload server's view of the upload disagrees with the file.
    public static let uploadMismatch: Self = "upload-mismatch"
    /// More redirects than allowed.
    public static let redirects: Self = "redirects"
    /// A redirect to a scheme other than http or https.
    public static let redirectScheme: Self = "redirect-scheme"
    /// A redirect from https to http without a checksum or `--allow-downgrade`.
    public static let redirectDowngrade: Self = "redirect-downgrade"
    /// The address policy refused the peer's address (`--deny-private-addresses`).
    public static let addressRefused: Self = "address-refused"
}

/// The database, embedded or not, and the metrics server.
extension HaulError.Code {
    /// The server refused the login.
    public static let databaseLogin: Self = "database-login"
    /// The server has no such database.
    public static let databaseMissing: Self = "database-missing"
    /// The server cannot be reached.
    public static let databaseUnreachable: Self = "database-unreachable"
    /// `DATABASE_URL` is not a URL or conninfo libpq reads.
    public static let databaseURLMalformed: Self = "database-url-malformed"
    /// A row held a value of another type than expected.
    public static let databaseDecode: Self = "database-decode"
    /// The embedded PostgreSQL could not be set up or started.
    public static let embeddedPostgres: Self = "embedded-postgres"
    /// No PostgreSQL server is installed to start an embedded one.
    public static let embeddedPostgresMissing: Self = "embedded-postgres-missing"
    /// A folder of the embedded server belongs to another user or is open to others.
    public static let embeddedPostgresUnsafe: Self = "embedded-postgres-unsafe"
    /// `--metrics-addr` or `--addr` names no address this host has.
    public static let metricsAddrUnavailable: Self = "metrics-addr-unavailable"
    /// The address is already in use.
    public static let metricsAddrInUse: Self = "metrics-addr-in-use"
    /// The HTTP server could not start.
    public static let metricsServer: Self = "metrics-server"
}
