import Foundation
import HaulCore
import HaulHTTP
import HaulS3
import HaulS3Storage
import HaulStorage
import HaulWorker

enum WorkerCommand: Command {
    static let name = "worker"
    static let summary = "run the planner, fetcher, finalizer and rescuer roles until SIGTERM"
    static let help = """
        usage: haul worker [--storage DIR] [--concurrency N] [--roles LIST] [options]

        Works on transfers from the database until SIGTERM or SIGINT. The first signal
        stops claiming, checkpoints and releases in-flight segments (their bytes are
        kept) and exits within --grace; a second signal exits at once.

          --storage DIR         storage root on this host (or HAUL_STORAGE); required. It
                                must exist and be writable, or the worker refuses to start;
                                s3://BUCKET[/PREFIX] stores in an S3-compatible bucket
          --create-storage      create the storage root when it does not exist
          -x, --concurrency N   segments fetched at once (default 4)
          --db-connections N    database connections the lanes share (default 2); the
                                worker holds 3 more (checkpoints, housekeeping, LISTEN)
          --probe-batch N       pending files of one origin claimed and probed as one batch
                                over up to --concurrency connections (default 1024); files
                                that fit in one segment finish in their probe, the batch
                                in one transaction; 1 probes one file at a time
          --roles LIST          comma-separated: planner,fetcher,finalizer,rescuer (default all)
          --lease DURATION      segment lease (default 30s); renewed at a third of it
          --stall-timeout DURATION  abort a request with no bytes for this long (default 30s)
          --lowest-speed RATE   give a lane back when its request stays under RATE for
                                --lowest-speed-time DURATION (defaults 1KiB and 30s; 0 turns
                                it off; off under --limit-rate): the segment keeps its bytes
                                and is retried later, its transfer fails after --max-attempts
          --max-attempts N      attempts per segment before its transfer fails (default 6)
          --yield-after DURATION  a lane that streamed one segment this long gives the rest
                                back (its bytes kept) when its origin holds two lanes or
                                more and another origin's work waits with none (default
                                1s; 0: never)
          --deny-private-addresses  refuse to connect to loopback, link-local (169.254/16,
                                fe80::/10), private and other non-public addresses, checked
                                after DNS on every connection and redirect (or
                                HAUL_DENY_PRIVATE_ADDRESSES=1)
          --allow-network CIDR  a network reachable even so (repeatable, or HAUL_ALLOW_NETWORKS
                                as a comma-separated list), e.g. an internal mirror's
          --max-file-size SIZE  refuse files announced bigger than this (files bigger than the
                                storage are always refused, bigger than its free space retried)
          --limit-rate RATE     most bytes per second this worker receives in all, shared
                                by its --concurrency connections (10M, 1G, 10MiB)
          --grace DURATION      how long a graceful stop may take (default 10s)
          --poll-interval DURATION  idle poll period (default 1s); one lane polls, doubling
                                up to 4 periods while nothing turns up
          --poll-only           do not LISTEN (the default behind a pooler)
          --metrics-addr HOST:PORT  serve Prometheus /metrics and /healthz there
                                (healthz is 503 as soon as a statement or the LISTEN
                                connection finds the database unreachable, or it has
                                not answered for three heartbeats, or the storage root
                                stopped being writable)
          --extract-max-size SIZE  refuse extractions past SIZE (default: 1032 times the archive's
                                size); a transfer may ask for less, never more; always capped
                                by a POSIX storage's free space less a reserve (5%, at most 1GiB)
          --extract-max-ratio N  refuse a compressed entry expanding more than N times (default:
                                no limit); a transfer may ask for less, never more
          --log-format text|json  log line format (default text)
          -v, --verbose         log every segment
          -q, --quiet           log only warnings and errors
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(
            words,
            options: [
                "--storage", "--concurrency", "--db-connections", "--probe-batch", "--roles", "--lease", "--stall-timeout", "--max-attempts", "--grace",
                "--lowest-speed", "--lowest-speed-time", "--yield-after",
                "--poll-interval",
                "--max-file-size", "--allow-network",
                "--log-format", "--limit-rate",
                "--metrics-addr", "--extract-max-size", "--extract-max-ratio",
            ],
            flags: ["--poll-only", "--verbose", "--quiet", "--create-storage", "--deny-private-addresses"],
            short: ["v": "--verbose", "q": "--quiet", "x": "--concurrency"])
        _ = try arguments.expect(0, "")
        guard let storagePath = arguments.value("--storage") ?? ProcessInfo.processInfo.environment["HAUL_STORAGE"] else {
            throw HaulError.usage("no storage root", hint: "pass --storage DIR or set HAUL_STORAGE to the shared storage mount")
        }
        let format = arguments.value("--log-format") ?? "text"
        guard let logFormat = Log.Format(rawValue: format) else { throw HaulError.usage("--log-format '\(format)' is not text or json") }
        guard !(arguments.has("--verbose") && arguments.has("--quiet")) else { throw HaulError.usage("--verbose and --quiet contradict each other") }
        Log.configure(format: logFormat, verbose: arguments.has("--verbose"), minimum: arguments.has("--quiet") ? .warning : nil)
        let grace = try arguments.duration("--grace") ?? 10
        let storage = try Self.storage(storagePath, create: arguments.has("--create-storage"))
        let session = try DatabaseSession()
        defer { session.close() }
        var config = WorkerConfig(conninfo: session.conninfo, storage: storage.root, backend: storage.store)
        config.objectUploader = ObjectUpload.send
        try apply(arguments, to: &config)
        if session.connection.throughPooler && !config.pollOnly {
            // A LISTEN behind a pooler in transaction mode stays on a server session other
            // clients are then lent, and its notices reach nobody: poll instead.
            Log.info("the database is reached through a pooler: polling for work, as with --poll-only")
            config.pollOnly = true
        }
        let worker = Worker(config: config, adopting: session.connection)
        if let address = arguments.value("--metrics-addr") { try worker.serveMetrics(on: address) }
        return runUntilSignal(worker, grace: grace)
    }

    /// The storage a worker may start on: an S3 location whose bucket answers, or a local root that
    /// exists (or `create`) and that this user can write; anything else refuses the start (exit 2).
    static func storage(_ path: String, create: Bool) throws -> (root: StorageRoot, store: ObjectStore?) {
        if S3Location.isURLLike(path) { return try ObjectStore.storage(path, what: "--storage") }
        do {
            return (try StorageRoot.writable(path, create: create, naming: .storageOption), nil)
        } catch let error as HaulError {
            throw HaulError.usage(error.message, hint: error.hint)
        }
    }

    /// Applies the tuning flags shared by `worker` and `get`.
    static func apply(_ arguments: Arguments, to config: inout WorkerConfig) throws {
        config.concurrency = try arguments.positiveInt("--concurrency") ?? config.concurrency
        config.laneConnections = try arguments.positiveInt("--db-connections") ?? config.laneConnections
        config.probeBatch = try arguments.positiveInt("--probe-batch") ?? config.probeBatch
        if let roles = arguments.value("--roles") { config.roles = try Role.parseList(roles) }
        config.lease = try arguments.duration("--lease") ?? config.lease
        config.stallTimeout = Int((try arguments.duration("--stall-timeout") ?? Double(config.stallTimeout)).rounded(.up))
        config.lowestSpeed = try lowestSpeed(arguments)
        if let after = try arguments.duration("--yield-after", allowZero: true) { config.yieldAfter = after > 0 ? after : nil }
        config.maxAttempts = try arguments.positiveInt("--max-attempts") ?? config.maxAttempts
        config.maxFileSize = try arguments.size("--max-file-size") ?? config.maxFileSize
        config.addressPolicy = try addressPolicy(arguments)
        config.pollInterval = try arguments.duration("--poll-interval") ?? config.pollInterval
        config.pollOnly = arguments.has("--poll-only")
        config.limitRate = try arguments.size("--limit-rate")
        config.extractMaxSize = try arguments.size("--extract-max-size") ?? config.extractMaxSize
        config.extractMaxRatio = try arguments.positiveInt("--extract-max-ratio").map(Int64.init) ?? config.extractMaxRatio
    }

    /// `--lowest-speed RATE` and `--lowest-speed-time DURATION` (default 1 KiB/s over 30 s; 0 turns the rule off).
    static func lowestSpeed(_ arguments: Arguments) throws -> LowestSpeed? {
        let standard = LowestSpeed.standard
        let rate = try arguments.value("--lowest-speed").map { $0 == "0" ? 0 : try ByteSize.parse($0, flag: "--lowest-speed") }
        let time = try arguments.duration("--lowest-speed-time", allowZero: true).map { Int($0.rounded(.up)) }
        return LowestSpeed(bytesPerSecond: rate ?? standard.bytesPerSecond, seconds: time ?? standard.seconds)
    }

    /// `--deny-private-addresses` and `--allow-network`, or their environment variables.
    static func addressPolicy(_ arguments: Arguments) throws -> AddressPolicy {
        let environment = ProcessInfo.processInfo.environment
        let deny = try arguments.has("--deny-private-addresses") || denyFromEnvironment(environment["HAUL_DENY_PRIVATE_ADDRESSES"])
        var networks = try arguments.all("--allow-network").map { try AddressPolicy.Network(parsing: $0) }
        for item in (environment["HAUL_ALLOW_NETWORKS"] ?? "").split(separator: ",") where !item.trimmingWhitespace().isEmpty {
            networks.append(try AddressPolicy.Network(parsing: String(item), flag: "HAUL_ALLOW_NETWORKS"))
        }
        if !networks.isEmpty && !deny {
            throw HaulError.usage("--allow-network makes sense only with --deny-private-addresses", hint: "add --deny-private-addresses")
        }
        return AddressPolicy(denyPrivate: deny, allowed: networks)
    }

    /// `HAUL_DENY_PRIVATE_ADDRESSES`: on for `1`, `true`, `yes` or `on`, off for `0`, `false`,
    /// `no`, `off` or nothing; any other value is a usage error, so a typo never leaves a
    /// service that believes itself protected without the policy.
    static func denyFromEnvironment(_ value: String?) throws -> Bool {
        switch value?.trimmingWhitespace().lowercased() ?? "" {
        case "1", "true", "yes", "on": return true
        case "", "0", "false", "no", "off": return false
        default:
            throw HaulError.usage(
                "HAUL_DENY_PRIVATE_ADDRESSES='\(SafeText.cleanLine(value ?? ""))' is neither on nor off", hint: "set it to 1 (refuse private addresses) or 0")
        }
    }

    /// Runs `worker` on its own threads until a signal, then drains within `grace` seconds.
    static func runUntilSignal(_ worker: Worker, grace: Double) -> Int32 {
        Signals.install()
        worker.start()
        while !Signals.stopRequested { usleep(100_000) }
        Log.info("stopping: checkpointing and releasing in-flight work", [("grace", "\(grace)s")])
        worker.stop()
        if !worker.waitUntilStopped(timeout: grace) {
            Log.warning("grace period over; exiting with work in flight (its leases will expire)")
            return ExitCode.interrupted
        }
        Log.info("worker stopped")
        return ExitCode.success
    }
}
