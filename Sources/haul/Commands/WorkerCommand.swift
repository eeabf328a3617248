import Foundation
import HaulCore
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

          --storage DIR         storage root on this host (or HAUL_STORAGE); required;
                                s3://BUCKET[/PREFIX] stores in an S3-compatible bucket
          --concurrency N       segments fetched at once (default 4)
          --probe-batch N       pending files of one origin claimed and probed as one batch
                                over up to --concurrency connections (default 64); files
                                that fit in one segment finish in their probe, the batch
                                in one transaction; 1 probes one file at a time
          --roles LIST          comma-separated: planner,fetcher,finalizer,rescuer (default all)
          --lease DURATION      segment lease (default 30s); renewed at a third of it
          --stall-timeout DURATION  abort a request with no bytes for this long (default 30s)
          --max-attempts N      attempts per segment before its transfer fails (default 6)
          --grace DURATION      how long a graceful stop may take (default 10s)
          --poll-interval DURATION  idle poll period (default 1s)
          --poll-only           do not LISTEN (for PgBouncer in transaction mode)
          --metrics-addr HOST:PORT  serve Prometheus /metrics and /healthz there
                                (healthz is 503 when the database stopped answering)
          --log-format text|json  log line format (default text)
          --verbose             log every segment
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(
            words,
            options: [
                "--storage", "--concurrency", "--probe-batch", "--roles", "--lease", "--stall-timeout", "--max-attempts", "--grace", "--poll-interval",
                "--log-format",
                "--metrics-addr",
            ],
            flags: ["--poll-only", "--verbose"])
        _ = try arguments.expect(0, "")
        guard let storagePath = arguments.value("--storage") ?? ProcessInfo.processInfo.environment["HAUL_STORAGE"] else {
            throw HaulError.usage("no storage root", hint: "pass --storage DIR or set HAUL_STORAGE to the shared storage mount")
        }
        let format = arguments.value("--log-format") ?? "text"
        guard let logFormat = Log.Format(rawValue: format) else { throw HaulError.usage("--log-format '\(format)' is not text or json") }
        Log.configure(format: logFormat, verbose: arguments.has("--verbose"))
        let grace = try arguments.duration("--grace") ?? 10
        let session = try DatabaseSession()
        defer { session.close() }
        let storage = try ObjectStore.storage(storagePath, what: "--storage")
        var config = WorkerConfig(conninfo: session.conninfo, storage: storage.root)
        try apply(arguments, to: &config)
        if let store = storage.store {
            // Small files go through the planner one by one: each is one upload.
            config.objectStore = store
            config.probeBatch = 1
        }
        let worker = Worker(config: config)
        if let address = arguments.value("--metrics-addr") { try worker.serveMetrics(on: address) }
        return runUntilSignal(worker, grace: grace)
    }

    /// Applies the tuning flags shared by `worker` and `get`.
    static func apply(_ arguments: Arguments, to config: inout WorkerConfig) throws {
        config.concurrency = try arguments.positiveInt("--concurrency") ?? config.concurrency
        config.probeBatch = try arguments.positiveInt("--probe-batch") ?? config.probeBatch
        if let roles = arguments.value("--roles") { config.roles = try Role.parseList(roles) }
        config.lease = try arguments.duration("--lease") ?? config.lease
        config.stallTimeout = Int((try arguments.duration("--stall-timeout") ?? Double(config.stallTimeout)).rounded(.up))
        config.maxAttempts = try arguments.positiveInt("--max-attempts") ?? config.maxAttempts
        config.pollInterval = try arguments.duration("--poll-interval") ?? config.pollInterval
        config.pollOnly = arguments.has("--poll-only")
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
