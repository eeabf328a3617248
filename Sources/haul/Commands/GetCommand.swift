import Foundation
import HaulCore
import HaulQueue
import HaulStorage
import HaulWorker

enum GetCommand: Command {
    static let name = "get"
    static let summary = "download one URL on this machine with several connections, with a progress bar"
    static let help = """
        usage: haul get URL [-o PATH] [--connections N] [options]

        Enqueues URL, runs a worker in this process until the transfer is final, and
        shows a progress bar (log lines when stderr is not a terminal). With no
        DATABASE_URL, haul starts its own PostgreSQL under HAUL_HOME and stops it after.
        Interrupted (Ctrl-C) or killed, the same command again resumes where it stopped.

          -o, --output PATH     where to save; a directory (or a path ending in /) keeps
                                the origin's name (default: the current directory, named
                                from Content-Disposition or the URL like curl -OJ);
                                s3://BUCKET/KEY stores an object (see README)
          --connections N       segments downloaded at once (default 4)
          --stall-timeout DURATION  abort a request with no bytes for this long (default 30s)
          --quiet               no progress bar; only errors
        \(TransferFlags.help)
        Exit status: 0 done, 1 failed, 2 bad arguments, 130 interrupted.
        """

    static func run(_ words: [String]) throws -> Int32 {
        let normalized = words.map { $0 == "-o" ? "--output" : $0 }
        let arguments = try Arguments(
            normalized, options: TransferFlags.options.union(["--output", "--connections", "--stall-timeout", "--lease"]),
            flags: TransferFlags.flags.union(["--quiet"]))
        let url = try arguments.expect(1, "URL")[0]
        let object = try ObjectTarget.parse(arguments.value("--output"))
        let (root, dest) = try object.map { ($0.root.path, $0.dest) } ?? target(arguments.value("--output"))
        var request = try TransferFlags.build(url: url, dest: dest, arguments)
        let storage = try object?.root ?? StorageRoot(root)
        Log.configure(quiet: true)

        let session = try DatabaseSession()
        defer { session.close() }
        var config = WorkerConfig(conninfo: session.conninfo, storage: storage)
        config.concurrency = try arguments.positiveInt("--connections") ?? 4
        config.stallTimeout = Int((try arguments.duration("--stall-timeout") ?? 30).rounded(.up))
        config.lease = try arguments.duration("--lease") ?? config.lease
        if let object {
            config.objectStore = object.store
            config.probeBatch = 1
        }

        let store = TransferStore(session.connection)
        let localTarget = object.map { ObjectTarget.describe($0.store, dest: dest ?? "") } ?? storage.path + "/" + (dest ?? "")
        let id: Int64
        if let earlier = try store.unfinishedGet(url: url, localTarget: localTarget) {
            id = earlier
            try store.adopt(id, owner: config.workerID)
            if let state = try store.status(id)?.state, state == .failed || state == .paused {
                try store.apply(state == .failed ? .retry : .resume, to: id)
            }
            if !arguments.has("--quiet") { Output.error("resuming transfer \(id)") }
        } else {
            request.owner = config.workerID
            request.options.localTarget = localTarget
            id = try store.enqueue(request)
        }
        return try follow(id, store: store, config: config, quiet: arguments.has("--quiet"))
    }

    /// Splits `-o` into a storage root and a destination relative to it (`nil`: name from the origin).
    static func target(_ output: String?) throws -> (root: String, dest: String?) {
        let cwd = FileManager.default.currentDirectoryPath
        guard let output, !output.isEmpty else { return (cwd, nil) }
        let absolute = output.hasPrefix("/") ? output : cwd + "/" + output
        var isDirectory: ObjCBool = false
        if output.hasSuffix("/") || (FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory) && isDirectory.boolValue) {
            return (absolute, nil)
        }
        let url = URL(fileURLWithPath: absolute)
        return (url.deletingLastPathComponent().path, url.lastPathComponent)
    }

    /// Runs the worker and the progress display until transfer `id` is final or a signal arrives.
    private static func follow(_ id: Int64, store: TransferStore, config: WorkerConfig, quiet: Bool) throws -> Int32 {
        let progress = ProgressCounter()
        let worker = Worker(config: config, progress: progress)
        Signals.install()
        worker.start()
        var bar = ProgressBar(terminal: Output.stderrIsTerminal)
        var status = try store.status(id)
        while let current = status, !current.state.isFinal, !Signals.stopRequested {
            if !quiet {
                let segments = StatusView.map(try store.segmentStates(id), width: 20)
                let bytes = min(current.size ?? .max, max(current.bytesDone, progress.bytes(for: id)))
                bar.update(bytes: bytes, size: current.size, segments: segments, state: current.state.rawValue)
            }
            usleep(200_000)
            status = try store.status(id)
        }
        if !quiet { bar.finish() }
        worker.stop()
        let drained = worker.waitUntilStopped(timeout: 10)
        if status?.state.isFinal == true { worker.abortStoppedUploads() }
        guard let final = status, final.state.isFinal else {
            Output.error("haul: interrupted\(drained ? "; progress kept" : ""): run the same command again to resume")
            return ExitCode.interrupted
        }
        switch final.state {
        case .done:
            if !quiet {
                let path = config.objectStore.map { ObjectTarget.describe($0, dest: final.dest ?? "") } ?? config.storage.path + "/" + (final.dest ?? "")
                Output.error("saved \(path) (\(ByteSize.format(final.size ?? 0)))\(final.computedDigest.map { ", \($0)" } ?? "")")
            }
            return ExitCode.success
        default:
            Output.error("haul: transfer \(id) \(final.state.rawValue): \(final.error ?? "no reason recorded")")
            return ExitCode.failure
        }
    }
}
