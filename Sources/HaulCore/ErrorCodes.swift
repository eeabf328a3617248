/// The error kinds Haul's modules share. A module with kinds of its own (the archive reader,
/// say) declares them in an extension beside its code.
extension HaulError.Code {
    /// Bad input on the command line or in a manifest: the process exits with status 2.
    ///
    /// Read the one line printed: it names the argument or manifest line and what to give instead; `haul
    /// COMMAND --help` lists the options.
    public static let usage = Self("usage", exit: ExitStatus.usage)
    /// A bug or an impossible state: the message says what was expected.
    ///
    /// Report it with the message and the command that led to it; retrying may get past it.
    public static let `internal` = Self("internal", exit: ExitStatus.failure)
    /// The worker's lease on a row was taken over or reset: stop at once, write nothing more.
    ///
    /// Nothing: another worker holds the work now and finishes it. Frequent ones mean workers stall longer
    /// than `--lease`.
    public static let leaseLost = Self("lease-lost", exit: ExitStatus.failure)
    /// The operator canceled the transfer.
    ///
    /// Nothing, if the cancel was meant; `haul retry ID` takes the transfer up again.
    public static let canceled = Self("canceled", exit: ExitStatus.failure)
    /// A graceful stop interrupted the work; another worker resumes it.
    ///
    /// Nothing: the work was released with its progress and is resumed by another worker, or by running the
    /// same `haul get` again.
    public static let interrupted = Self("interrupted", exit: ExitStatus.failure)
    /// No transfer has that id.
    ///
    /// Check the id: `haul list` shows the transfers there are (finished ones are pruned after
    /// `HAUL_RETENTION`).
    public static let noSuchTransfer = Self("no-such-transfer", exit: ExitStatus.failure)
    /// No batch has that name.
    ///
    /// Check the name: `haul batches` lists the batches there are.
    public static let noSuchBatch = Self("no-such-batch", exit: ExitStatus.failure)
    /// An operator action that the transfer's state does not allow.
    ///
    /// Read the state the message names (`haul status ID` shows it): `retry` takes failed and canceled
    /// transfers, `pause` unfinished ones, `resume` paused ones.
    public static let invalidTransition = Self("invalid-transition", exit: ExitStatus.failure)
    /// The database is older than this binary: run `haul migrate`.
    ///
    /// Run `haul migrate` with this binary (idempotent, safe while other hosts run it).
    public static let schemaOutdated = Self("schema-outdated", exit: ExitStatus.failure)
    /// The database cannot be reached or answered with an error.
    ///
    /// Check that PostgreSQL is up and reachable with `DATABASE_URL`; the message carries the server's own
    /// words.
    public static let database = Self("database", exit: ExitStatus.failure)
    /// A URL that is not an absolute http(s) URL with a host.
    ///
    /// Give an absolute `http://` or `https://` URL with a host name.
    public static let badURL = Self("bad-url", exit: ExitStatus.failure)
    /// The origin answered with an HTTP status that is not success.
    ///
    /// Check the URL and any credentials it needs; the message names the status the origin answered.
    public static let originStatus = Self("origin-status", exit: ExitStatus.originError)
    /// The origin refused the request's credentials (401 or 403).
    ///
    /// Check the credentials (`--netrc`, `--header 'Authorization: …'`) or the URL's token: the origin says
    /// they do not let this request in.
    public static let originAuth = Self("origin-auth", exit: ExitStatus.authentication)
    /// The origin's file changed while it was being downloaded (validator or size).
    ///
    /// The origin published a new version mid-download: `haul retry ID` fetches the new version whole.
    public static let originChanged = Self("origin-changed", exit: ExitStatus.failure)
    /// The finished file's digest differs from the expected one.
    ///
    /// `haul retry ID` downloads it afresh; when the expected digest was mistyped, `haul retry ID --checksum
    /// ALGO:HEX` with the right one publishes the bytes kept.
    public static let checksumMismatch = Self("checksum-mismatch", exit: ExitStatus.checksumMismatch)
    /// The finished file's size differs from the planned one.
    ///
    /// `haul retry ID`; if it recurs, the origin serves inconsistent sizes for the file.
    public static let sizeMismatch = Self("size-mismatch", exit: ExitStatus.failure)
    /// Part files of the parts layout vanished from storage before assembly.
    ///
    /// Nothing: the finalizer sends the missing segments back to be fetched. If it recurs, find what removes
    /// files under the storage root.
    public static let partsMissing = Self("parts-missing", exit: ExitStatus.failure)
    /// Storage refused a write, a sync or a rename.
    ///
    /// Check the storage mount (space, permissions, health); the message names the path and the system's
    /// reason. `haul retry ID` after fixing it.
    public static let storage = Self("storage", exit: ExitStatus.storage)
    /// A transfer has no destination yet (it was never planned).
    ///
    /// `haul retry ID` plans it again; report it if it recurs.
    public static let unplanned = Self("unplanned", exit: ExitStatus.failure)
}

/// Refusals and failures of the command line and the queue.
extension HaulError.Code {
    /// An operator action raced a worker: the row changed state meanwhile.
    ///
    /// Look at `haul status ID` and run the action again if it still makes sense.
    public static let conflict = Self("conflict", exit: ExitStatus.failure)
    /// `haul get` would overwrite a file it did not write (exit 2; `--force` overwrites).
    ///
    /// Give another `-o`, remove the file, or add `--force` to overwrite it.
    public static let destinationExists = Self("destination-exists", exit: ExitStatus.usage)
    /// Another active transfer already writes that destination (exit 2).
    ///
    /// Wait for the other transfer (the message names it), cancel it, or give another destination.
    public static let destinationBusy = Self("destination-busy", exit: ExitStatus.usage)
    /// Planning or finalizing was started more often than the attempts allow without an outcome.
    ///
    /// Find why workers die on this transfer (out of memory, a crash: see their logs), then `haul retry ID`.
    public static let abandoned = Self("abandoned", exit: ExitStatus.failure)
    /// A download's partial file vanished from storage.
    ///
    /// Find what removes partial files under the storage root (a clean-up job, another host), then `haul
    /// retry ID` starts it over.
    public static let partialMissing = Self("partial-missing", exit: ExitStatus.failure)
    /// A download's partial file was written by a download of another URL meanwhile.
    ///
    /// Nothing: the transfer starts over as a new generation. Give transfers of different URLs different
    /// destinations to avoid the cost.
    public static let partialOverwritten = Self("partial-overwritten", exit: ExitStatus.failure)
    /// The parts layout's recorded parts leave a gap in the file.
    ///
    /// `haul retry ID` fetches the missing range again.
    public static let partsGap = Self("parts-gap", exit: ExitStatus.failure)
    /// A recorded part file is shorter than its recorded length.
    ///
    /// `haul retry ID` fetches the part again; if it recurs, check the storage for truncated files.
    public static let partsShort = Self("parts-short", exit: ExitStatus.failure)
    /// A path read back from the database breaks the storage root's rules, or a link was planted.
    ///
    /// Nothing was written outside the storage root. Check the destination, and who can create links under
    /// the root; `haul retry ID` once it is clean.
    public static let unsafePath = Self("unsafe-path", exit: ExitStatus.failure)
    /// The storage root does not exist (and `--create-storage` was not given).
    ///
    /// Mount the storage or fix the path, or add `--create-storage` to create the folder.
    public static let storageMissing = Self("storage-missing", exit: ExitStatus.failure)
    /// A file, body or archive bigger than a limit allows (`--max-file-size`, `--max-size`).
    ///
    /// Raise the limit the message names (`--max-file-size`, `--extract-max-size`, `--max-size`) if the file
    /// is expected to be that big.
    public static let tooLarge = Self("too-large", exit: ExitStatus.failure)
    /// The storage has no room for the file now; retried with backoff.
    ///
    /// Nothing at first: the segment is retried with backoff. Free space or grow the volume, then `haul retry
    /// ID` if it gave up.
    public static let storageFull = Self("storage-full", exit: ExitStatus.storage)
    /// The storage root refuses this user.
    ///
    /// Give the user that runs `haul` write access to the storage root, or run it as a user that has it.
    public static let storagePermission = Self("storage-permission", exit: ExitStatus.storage)
    /// A file to upload could not be read.
    ///
    /// Check that the file exists and that the user running `haul` may read it.
    public static let fileUnreadable = Self("file-unreadable", exit: ExitStatus.failure)
    /// A file changed while it was being uploaded.
    ///
    /// Upload it again once nothing writes it any more.
    public static let fileChanged = Self("file-changed", exit: ExitStatus.failure)
}

/// What origins and upload servers do wrong, and what the network does to a request.
extension HaulError.Code {
    /// The host name did not resolve.
    ///
    /// Check the host name in the URL and this host's resolver; retried with backoff, then `haul retry ID`.
    public static let dns = Self("dns", exit: ExitStatus.network)
    /// The connection was refused or timed out.
    ///
    /// Check that the origin is up and reachable from the worker hosts (firewall, proxy); retried with
    /// backoff.
    public static let connect = Self("connect", exit: ExitStatus.network)
    /// The peer reset the connection.
    ///
    /// Nothing unless it keeps happening: retried with backoff from the last checkpoint.
    public static let connectionReset = Self("connection-reset", exit: ExitStatus.network)
    /// Another network failure (transient).
    ///
    /// Nothing unless it keeps happening: retried with backoff; then check the network between the workers
    /// and the peer.
    public static let network = Self("network", exit: ExitStatus.network)
    /// A TLS handshake failed.
    ///
    /// Check the peer's TLS setup (protocol versions, ciphers) and any proxy in between.
    public static let tls = Self("tls", exit: ExitStatus.tls)
    /// The peer's certificate could not be verified.
    ///
    /// Make sure the peer's certificate chain is valid for its name; for a private CA give its bundle with
    /// `--ca-cert` or `HAUL_CA_BUNDLE`.
    public static let tlsVerify = Self("tls-verify", exit: ExitStatus.tls)
    /// No byte arrived for the stall timeout.
    ///
    /// Nothing unless it keeps happening: retried from the last checkpoint. A slow origin may need a longer
    /// `--stall-timeout`.
    public static let stalled = Self("stalled", exit: ExitStatus.network)
    /// The origin sent slower than the lowest speed for the lowest-speed time, so the lane was given back.
    ///
    /// Nothing unless it keeps happening: retried later from the last checkpoint. For an origin that is
    /// slow by nature lower `--lowest-speed` (0 turns the rule off).
    public static let tooSlow = Self("too-slow", exit: ExitStatus.network)
    /// A libcurl failure with no better name; the message says which.
    ///
    /// Read the message, which carries libcurl's reason; retried when transient.
    public static let curl = Self("curl", exit: ExitStatus.failure)
    /// A malformed HTTP exchange.
    ///
    /// The peer broke HTTP: retried; if it persists, report it to whoever runs the peer.
    public static let http = Self("http", exit: ExitStatus.malformedResponse)
    /// The origin answered 404 or 410.
    ///
    /// Check the URL: the origin says the file is not there (retrying does not help).
    public static let notFound = Self("not-found", exit: ExitStatus.originError)
    /// The response ended before the bytes it announced.
    ///
    /// Nothing unless it keeps happening: retried from the last checkpoint.
    public static let shortBody = Self("short-body", exit: ExitStatus.network)
    /// The response went on past the bytes asked for.
    ///
    /// Nothing unless it keeps happening: retried; a persistent one is an origin that ignores ranges.
    public static let longBody = Self("long-body", exit: ExitStatus.malformedResponse)
    /// The response ended before it was complete.
    ///
    /// `haul retry ID` fetches what is missing.
    public static let incomplete = Self("incomplete", exit: ExitStatus.network)
    /// A 206 for other bytes than asked, with unchanged validators: retried.
    ///
    /// Nothing unless it keeps happening: retried with backoff; a persistent one is a broken origin or cache
    /// in between.
    public static let badContentRange = Self("bad-content-range", exit: ExitStatus.malformedResponse)
    /// An origin whose answer breaks a limit (a response head too big).
    ///
    /// Report it to whoever runs the origin (the message says what it sent); retried meanwhile.
    public static let badOrigin = Self("bad-origin", exit: ExitStatus.malformedResponse)
    /// An upload server whose answer cannot be used (a tus `Location` off its origin, say).
    ///
    /// Check the upload URL and the server's configuration; the message says what it answered.
    public static let badServer = Self("bad-server", exit: ExitStatus.failure)
    /// The server answered 5xx; retried.
    ///
    /// Nothing unless it keeps happening: retried with backoff, honouring `Retry-After`; then ask whoever
    /// runs the server.
    public static let serverError = Self("server-error", exit: ExitStatus.originError)
    /// The upload server refused the upload (4xx).
    ///
    /// Read the status in the message: check the upload URL, the credentials and the server's size limits.
    public static let uploadRejected = Self("upload-rejected", exit: ExitStatus.failure)
    /// The upload server's view of the upload disagrees with the file.
    ///
    /// Upload again; if it recurs, the server stores something other than what it was sent.
    public static let uploadMismatch = Self("upload-mismatch", exit: ExitStatus.failure)
    /// More redirects than allowed.
    ///
    /// Check the URL: the origin redirects in a loop or through too many hops.
    public static let redirects = Self("redirects", exit: ExitStatus.originError)
    /// A redirect to a scheme other than http or https.
    ///
    /// Give the final http(s) URL directly; Haul follows only http and https redirects.
    public static let redirectScheme = Self("redirect-scheme", exit: ExitStatus.failure)
    /// A redirect from https to http without a checksum or `--allow-downgrade`.
    ///
    /// Give the transfer a `--checksum`, or add `--allow-downgrade` if plain HTTP is acceptable.
    public static let redirectDowngrade = Self("redirect-downgrade", exit: ExitStatus.failure)
    /// The address policy refused the peer's address (`--deny-private-addresses`).
    ///
    /// If the address is meant to be reached, allow its network with `--allow-network` (or
    /// `HAUL_ALLOW_NETWORKS`).
    public static let addressRefused = Self("address-refused", exit: ExitStatus.failure)
}

/// The database, embedded or not, and the metrics server.
extension HaulError.Code {
    /// The server refused the login.
    ///
    /// Check the user and password in `DATABASE_URL` (or `PG*`) and the server's `pg_hba.conf`.
    public static let databaseLogin = Self("database-login", exit: ExitStatus.failure)
    /// The server has no such database.
    ///
    /// Create the database, or fix its name in `DATABASE_URL`; then run `haul migrate`.
    public static let databaseMissing = Self("database-missing", exit: ExitStatus.failure)
    /// The server cannot be reached.
    ///
    /// Check that PostgreSQL runs and that the host and port in `DATABASE_URL` reach it from here.
    public static let databaseUnreachable = Self("database-unreachable", exit: ExitStatus.failure)
    /// `DATABASE_URL` is not a URL or conninfo libpq reads.
    ///
    /// Give a `postgresql://` URL or a libpq conninfo (`host=… dbname=…`) in `DATABASE_URL`.
    public static let databaseURLMalformed = Self("database-url-malformed", exit: ExitStatus.failure)
    /// A row held a value of another type than expected.
    ///
    /// Run `haul migrate`: a binary and a schema of different versions disagree. Report it if it persists.
    public static let databaseDecode = Self("database-decode", exit: ExitStatus.failure)
    /// The embedded PostgreSQL could not be set up or started.
    ///
    /// Read the message (it names the step and PostgreSQL's own words) and the embedded server's `server.log`
    /// under `HAUL_HOME`; or set `DATABASE_URL` to a server of your own.
    public static let embeddedPostgres = Self("embedded-postgres", exit: ExitStatus.failure)
    /// No PostgreSQL server is installed to start an embedded one.
    ///
    /// Install PostgreSQL's server package (`postgresql` on Debian), or set `DATABASE_URL` to a server.
    public static let embeddedPostgresMissing = Self("embedded-postgres-missing", exit: ExitStatus.failure)
    /// A folder of the embedded server belongs to another user or is open to others.
    ///
    /// Give `HAUL_HOME` a folder of your own that others cannot enter (mode 0700), or remove the one the
    /// message names.
    public static let embeddedPostgresUnsafe = Self("embedded-postgres-unsafe", exit: ExitStatus.failure)
    /// `--metrics-addr` or `--addr` names no address this host has.
    ///
    /// Give an address this host has (`127.0.0.1:9464`, `0.0.0.0:9464`).
    public static let metricsAddrUnavailable = Self("metrics-addr-unavailable", exit: ExitStatus.failure)
    /// The address is already in use.
    ///
    /// Pick a free port, or stop what listens there.
    public static let metricsAddrInUse = Self("metrics-addr-in-use", exit: ExitStatus.failure)
    /// The HTTP server could not start.
    ///
    /// Read the message for the reason; try another address.
    public static let metricsServer = Self("metrics-server", exit: ExitStatus.failure)
}

// The list `HaulError.Code(stored:among:)` reads stored codes back with; ErrorCodeTests checks
// that it holds every code declared above.
extension HaulError.Code {
    /// Every code this module declares.
    public static let coreCodes: [Self] = [
        .usage, .internal, .leaseLost, .canceled, .interrupted, .noSuchTransfer, .noSuchBatch, .invalidTransition, .schemaOutdated, .database,
        .badURL, .originStatus, .originAuth, .originChanged, .checksumMismatch, .sizeMismatch, .partsMissing, .storage, .unplanned, .conflict,
        .destinationExists, .destinationBusy, .abandoned, .partialMissing, .partialOverwritten, .partsGap, .partsShort, .unsafePath, .storageMissing,
        .tooLarge, .storageFull, .storagePermission, .fileUnreadable, .fileChanged, .dns, .connect, .connectionReset, .network, .tls, .tlsVerify,
        .stalled, .tooSlow, .curl, .http, .notFound, .shortBody, .longBody, .incomplete, .badContentRange, .badOrigin, .badServer, .serverError,
        .uploadRejected, .uploadMismatch, .redirects, .redirectScheme, .redirectDowngrade, .addressRefused, .databaseLogin, .databaseMissing,
        .databaseUnreachable, .databaseURLMalformed, .databaseDecode, .embeddedPostgres, .embeddedPostgresMissing, .embeddedPostgresUnsafe,
        .metricsAddrUnavailable, .metricsAddrInUse, .metricsServer,
    ]
}
