import Foundation
import HaulCore
import HaulHTTP
import HaulMetalink
import HaulPostgres
import HaulQueue
import HaulS3Storage
import HaulStorage
import HaulWorker

enum GetCommand: Command {
    static let name = "get"
    static let summary = "download URLs on this machine with several connections, with a progress bar"
    static let help = """
        usage: haul get URL... [-o PATH] [-x N] [-q|-v] [options]
               haul get -i FILE [-o DIR/] [options]

        Enqueues URL, runs a worker in this process until the transfer is final, and
        shows a progress bar (log lines when stderr is not a terminal). With no
        DATABASE_URL, haul starts its own PostgreSQL under HAUL_HOME and stops it after.
        Interrupted (Ctrl-C) or killed, the same command again resumes where it stopped.

          -o, --output PATH     where to save; a directory (or a path ending in /) keeps
                                the origin's name (default: the current directory, named
                                from Content-Disposition or the URL like curl -OJ);
                                - streams the file to standard output in order as it
                                arrives (-x connections when the origin serves ranges, at
                                most 64MiB held ahead; resumed from the next byte if cut;
                                nothing on disk); s3://BUCKET/KEY stores an object (see README)
          --output-dir DIR      the folder -o NAME (or the origin's name) is saved in, as curl
          --force               overwrite a file (or s3:// object) haul did not write
                                (refused otherwise)
          -N, --timestamping    download only when the origin's copy is newer than the file
                                already there (its recorded validators, else its mtime, as
                                wget -N; an s3:// object's Last-Modified); a newer copy
                                replaces it
          -i, --input-file FILE more URLs, one a line ('#' comments; - for stdin), as wget -i
                                and aria2c -i; with several URLs, -o must be a directory
          -x, --connections N   segments downloaded at once (default 4)
          --limit-rate RATE     most bytes per second in all, shared by the connections
                                (512K, 10M as curl writes it, or 10MiB)
          --proxy URL           proxy for http and https (http://host:3128, socks5h://…);
                                http_proxy, https_proxy and no_proxy work without it
          --json                print the result on stdout: {"id", "url", "state", "path",
                                "size", "digest", "error", "code"} ({"transfers": [...]} for
                                several); "code" is the error code (docs/reference-errors.md)
          --stall-timeout DURATION  abort a request with no bytes for this long (default 30s)
          --lowest-speed RATE   abort a request that stays under RATE for
                                --lowest-speed-time DURATION and retry it later (defaults
                                1KiB and 30s; 0 turns it off; off under --limit-rate)
          --deny-private-addresses  refuse to connect to loopback, link-local, private and
                                other non-public addresses, checked after DNS on every
                                connection and redirect, as haul worker does (or
                                HAUL_DENY_PRIVATE_ADDRESSES=1): for URLs someone else gave
          --allow-network CIDR  a network reachable even so (repeatable, or HAUL_ALLOW_NETWORKS)
          -q, --quiet, -s       no progress bar; only errors
          -v, --verbose         also print the in-process worker's log lines
        curl's -H (--header), -k (--insecure) and --retry N (--max-attempts N+1) work; -L/-f
        are what haul always does (it follows redirects, fails on an error status). curl's
        -O/-J/-C/--continue-at and wget's -c/--continue are refused with one line saying Haul's
        way: it names files from the origin and resumes by itself (run the same command again).
        On a terminal the progress line is redrawn in place and fits its width (TERM=dumb:
        no escape sequences); otherwise a line with a timestamp and the rate since the
        previous line is written every 5 s. Haul writes no colours (NO_COLOR is honoured).
        \(TransferFlags.help)
        \(MirrorFlags.help)
        Exit status (the first failed URL's, in the order given; 2 if any was refused):
          0 done             1 failed otherwise     2 bad arguments or a refusal
          4 network (DNS, connect, reset, stall)    5 TLS (handshake, certificate)
          6 authentication (401, 403)               7 malformed response (HTTP, Content-Range)
          8 origin error (404, other 4xx, 5xx)      9 storage (full, permission)
          10 checksum mismatch                      130 interrupted (progress kept)
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(
            words,
            options: TransferFlags.options.union(MirrorFlags.options).union([
                "--output", "--connections", "--stall-timeout", "--lowest-speed", "--lowest-speed-time", "--lease", "--input-file", "--proxy", "--limit-rate",
                "--allow-network", "--output-dir",
            ]),
            flags: TransferFlags.flags.union(MirrorFlags.flags).union([
                "--quiet", "--verbose", "--json", "--force", "--timestamping", "--deny-private-addresses", "--silent", "--location", "--fail",
            ]),
            short: CurlHabits.short.merging([
                "o": "--output", "x": "--connections", "q": "--quiet", "v": "--verbose", "i": "--input-file", "N": "--timestamping",
            ]) { $1 },
            habits: CurlHabits.refusals)
        let output = try CurlHabits.output(arguments.value("--output"), directory: arguments.value("--output-dir"))
        let quiet = arguments.has("--quiet") || arguments.has("--silent")
        // A URL given twice (on the command line, or in a list) is one download into one file.
        var seen = Set<ExactText>()
        let metalink = try MirrorFlags.metalink(arguments)
        let metalinkURLs = metalink?.files.map { $0.mirrors[0].url } ?? []
        let urls = try (arguments.positionals + inputURLs(arguments.value("--input-file")) + metalinkURLs).filter { seen.insert(ExactText($0)).inserted }
        guard !urls.isEmpty else { throw HaulError.usage("missing URL", hint: "haul get URL... or haul get -i FILE") }
        let mirrors = try MirrorFlags.mirrors(arguments)
        guard mirrors.isEmpty || urls.count == 1 else {
            throw HaulError.usage("--mirror names another URL of one file, but there are \(urls.count) URLs", hint: "get one URL with its mirrors")
        }
        if output?.isEmpty == true {
            // An empty variable in a script (`-o "$OUT"`): never a quiet download into the current folder.
            throw HaulError.usage("-o is empty", hint: "give a file, a folder ending in /, - for standard output, or leave -o out to save here")
        }
        if output == "-" {
            try StandardOutputStream.refuse(arguments, urls: urls.count, metalinkFiles: metalink?.files.count ?? 0)
            return try stream(urls[0], metalink: metalink?.files.first, arguments, quiet: quiet)
        }
        let object = try ObjectTarget.parse(output)
        let (root, dest) = try object.map { ($0.root.path, $0.dest) } ?? target(output)
        guard urls.count == 1 || dest == nil else {
            throw HaulError.usage("-o names one file but there are \(urls.count) URLs", hint: "give -o a directory (ending in /) to keep the origins' names")
        }
        if object != nil, arguments.value("--layout") == StorageLayout.parts.rawValue {
            throw HaulError.usage("--layout parts is for a folder; an s3:// object is stored as one upload of parts", hint: "drop --layout")
        }
        let timestamping = arguments.has("--timestamping")
        // -N replaces an older file, as wget -N does: it is the point of asking.
        let force = arguments.has("--force") || timestamping
        // Every URL and flag is checked before anything is written.
        let secrets = try TransferFlags.secrets(arguments)
        let requests = try urls.map { url in
            var request = try TransferFlags.build(url: url, dest: timestamping ? try dest ?? Self.nameFromURL(url) : dest, arguments, secrets)
            request.options.keepExisting = force ? nil : true
            request.options.timestamping = timestamping ? true : nil
            request.mirrors = mirrors
            MirrorFlags.applyFlags(arguments, to: &request)
            if let file = metalink?.files.first(where: { $0.mirrors[0].url == url }) {
                MirrorFlags.apply(file, to: &request)
                // The Metalink names the file (checked as a destination when it was read).
                if dest == nil { request.dest = file.name }
            }
            return request
        }
        let addressPolicy = try WorkerCommand.addressPolicy(arguments)
        if let proxy = arguments.value("--proxy") { try useProxy(proxy) }
        // `-o /dev/null` is a curl habit: refused before anything is recorded, --force or not.
        if object == nil, let dest { try SpecialFile.refuse(root + "/" + dest, hint: SpecialFile.downloadHint) }
        let storage = try object?.root ?? outputFolder(root)
        Log.configure(verbose: arguments.has("--verbose"), quiet: !arguments.has("--verbose"))

        let session = try DatabaseSession()
        defer { session.close() }
        var config = WorkerConfig(conninfo: session.conninfo, storage: storage)
        // Only this get's transfers: a fleet's pending ones on the same database are not for this folder.
        config.scope = .own
        // Nobody else announces work for it: its lanes wake one another, and poll each second
        // for what an operator changes meanwhile (a resume), so it opens no LISTEN connection;
        // lanes past the first start when there is work for them (one small file needs one lane).
        config.pollOnly = true
        config.lanesOnDemand = true
        // A get lives for its files: one connection for all its threads, not one each.
        config.sharedConnection = true
        config.concurrency = try arguments.positiveInt("--connections") ?? 4
        config.stallTimeout = Int((try arguments.duration("--stall-timeout") ?? 30).rounded(.up))
        config.lowestSpeed = try WorkerCommand.lowestSpeed(arguments)
        config.lease = try arguments.duration("--lease") ?? config.lease
        if let object {
            config.backend = object.store
        }
        config.objectUploader = ObjectUpload.send
        config.limitRate = try arguments.size("--limit-rate")
        config.addressPolicy = addressPolicy

        // `consume`: the requests (a few hundred bytes a URL) are freed once recorded, not kept
        // while the list downloads.
        let (ids, resumed, restarted) = try record(
            consume requests, dest: dest, object: object, storage: storage, force: force, owner: config.workerID,
            connection: session.connection)
        if !quiet {
            for id in resumed { Output.error("resuming transfer \(id)") }
            for id in restarted { Output.error("starting transfer \(id) over: another transfer saved this file since it stopped") }
        }
        return try follow(ids, connection: session.connection, config: config, quiet: quiet, json: arguments.has("--json"))
    }

    /// Records the list in one transaction (one durable commit, not one a URL): each URL's
    /// unfinished transfer from an earlier get into the same place is adopted and resumed (or
    /// started over when another transfer wrote its file since), the others are inserted, all
    /// owned by `owner`. Refuses, before anything is recorded, a file at a name that is not the URL's.
    /// - Returns: the transfers' ids in the order of `requests`, and those resumed and started over.
    private static func record(
        _ requests: consuming [NewTransfer], dest: String?, object: ObjectTarget?, storage: StorageRoot, force: Bool, owner: String,
        connection: PostgresConnection
    ) throws -> (ids: [Int64], resumed: [Int64], restarted: [Int64]) {
        let store = TransferStore(connection)
        var resumed: [Int64] = []
        var restarted: [Int64] = []
        let ids = try connection.transaction { () -> [Int64] in
            // Files the origin names, which earlier gets of the same URLs saved in this folder,
            // may be fetched again (one query for the whole list).
            let folderTarget = object.map { $0.store.describe("") } ?? storage.path + "/"
            let saved = dest == nil && !force ? try store.namesSavedByGets(urls: requests.map(\.url), localTarget: folderTarget) : [:]
            let localTargets = requests.map { request in
                object.map { $0.store.describe(dest ?? "") } ?? storage.path + "/" + (request.dest ?? "")
            }
            let unfinished = try store.unfinishedGets(zip(requests, localTargets).map { ($0.url, $1) })
            // In the order of the URLs; `nil` for a new transfer, inserted with the others at the end.
            var ids: [Int64?] = []
            // The requests are completed in place, not copied: a long list's are most of what
            // this command holds (a few hundred bytes a URL).
            for index in requests.indices {
                requests[index].options.localTarget = localTargets[index]
                if requests[index].dest == nil, requests[index].options.keepExisting == true {
                    requests[index].options.replaceable = saved[ExactText(requests[index].url)]
                }
                let request = requests[index]
                let earlier = unfinished[index]
                let earlierStatus = try earlier.flatMap(store.status)
                // A file at the name must be this URL's, for a get that resumes as for a new one:
                // a file put there while the get was stopped is kept as well.
                if !force, let name = dest ?? earlierStatus?.dest,
                    let target = try OthersFiles.at(
                        name, url: request.url, storage: object?.store ?? FolderStorage(root: storage),
                        wroteBefore: { try store.getSaved(name, url: request.url, options: request.options) })
                {
                    throw OthersFiles.getRefusal(target)
                }
                if let earlier, let earlierStatus {
                    // Another transfer saving this file ran since: its bytes may be in the partial file.
                    let overwritten =
                        try store.partialsWrittenByOthers(among: [earlier]).contains(earlier)
                        || partialMarkedByAnother(earlierStatus, url: request.url, storage: storage)
                    try store.revise(earlier, to: request)
                    try store.adopt(earlier, owner: owner)
                    if overwritten {
                        try store.startOver([earlier])
                        restarted.append(earlier)
                    } else {
                        // Revising and adopting it left its state as it was.
                        let state = earlierStatus.state
                        if state == .failed || state == .paused { try store.apply(state == .failed ? .retry : .resume, to: earlier) }
                        resumed.append(earlier)
                    }
                    ids.append(earlier)
                } else {
                    requests[index].owner = owner
                    ids.append(nil)
                }
            }
            // All of them when none is resumed (the same storage, not a copy).
            let fresh = ids.contains { $0 != nil } ? zip(requests, ids).filter { $1 == nil }.map(\.0) : requests
            var inserted = try store.enqueueOwned(fresh).makeIterator()
            return ids.map { $0 ?? inserted.next()! }
        }
        return (ids, resumed, restarted)
    }

    /// `-o -`: `url` streamed to standard output in this process, with no database and no file.
    private static func stream(_ url: String, metalink: Metalink.File?, _ arguments: Arguments, quiet: Bool) throws -> Int32 {
        var transfer = try TransferFlags.build(url: url, dest: nil, arguments, try TransferFlags.secrets(arguments))
        if let metalink { MirrorFlags.apply(metalink, to: &transfer) }
        let stream = StandardOutputStream(
            settings: StreamFetch.Settings(
                transfer: transfer, stallTimeout: Int((try arguments.duration("--stall-timeout") ?? 30).rounded(.up)),
                lowestSpeed: try WorkerCommand.lowestSpeed(arguments), limitRate: try arguments.size("--limit-rate"),
                addressPolicy: try WorkerCommand.addressPolicy(arguments), connections: try arguments.positiveInt("--connections") ?? 4,
                hostLimit: HostLimits.fallbackDefault, quiet: quiet))
        if let proxy = arguments.value("--proxy") { try useProxy(proxy) }
        Log.configure(verbose: arguments.has("--verbose"), quiet: !arguments.has("--verbose"))
        return try stream.run()
    }

    /// Whether the partial file of the unfinished get `earlier` carries the mark of a URL other
    /// than `url` (`SourceMark`): a get of another URL saved into it since this one stopped, one
    /// recorded in another database too, which the history cannot show. Resuming would fail on
    /// the mark and start over anyway (`TransferFiles.confirmPartial`); seen here, the user is told.
    private static func partialMarkedByAnother(_ earlier: TransferStatus, url: String, storage: StorageRoot) -> Bool {
        guard earlier.layout == .inplace, let dest = earlier.dest, let files = try? TransferFiles(root: storage, relative: dest) else { return false }
        return SourceMark.read(files.partial(generation: earlier.generation), against: url) == .anotherURL
    }

    /// The name `-N` compares with when `-o` names no file: the URL's last path segment, as
    /// `wget -N` takes it (the origin's `Content-Disposition` is not known before asking).
    static func nameFromURL(_ url: String) throws -> String {
        // The same name the planner gives a file named from its URL.
        guard let name = OriginURL.lastPathSegment(url).flatMap(ContentDisposition.sanitize), !name.isEmpty else {
            throw HaulError.usage("-N needs a file to compare with, and \(Redaction.url(url)) names none", hint: "give -o FILE")
        }
        return try SafePath.validateDestination(name, what: "the URL's file name")
    }

    /// The URLs of `-i FILE` (`-` for stdin): one a line, blank lines and `#` comments skipped.
    static func inputURLs(_ source: String?) throws -> [String] {
        guard let source else { return [] }
        let data = source == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: source)
        guard let data else { throw HaulError.usage("cannot read -i '\(source)'", hint: "give a file with one URL a line, or - for stdin") }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// `--proxy URL`: the in-process worker's libcurl handles use it for http and https, as
    /// they would `http_proxy` / `https_proxy` (which work without the flag, as for curl).
    static func useProxy(_ proxy: String) throws {
        guard let components = URLComponents(string: proxy), let scheme = components.scheme, ["http", "https", "socks5", "socks5h"].contains(scheme),
            components.host?.isEmpty == false
        else {
            throw HaulError.usage("--proxy '\(Redaction.url(proxy))' is not a proxy URL", hint: "write it like http://proxy.example:3128")
        }
        for name in ["http_proxy", "https_proxy", "HTTPS_PROXY"] { setenv(name, proxy, 1) }
    }

    /// The folder the files are saved in, made when missing; one this user cannot make or
    /// write is bad input (exit 2) before anything is enqueued, rather than a transfer that
    /// retries a storage error it cannot get past.
    static func outputFolder(_ path: String) throws -> StorageRoot {
        do {
            return try StorageRoot.writable(path, naming: .outputFolder)
        } catch let error as HaulError {
            throw HaulError.usage(error.message, hint: error.hint)
        }
    }

    /// Splits `-o` into a storage root and a destination relative to it (`nil`: name from the origin).
    static func target(_ output: String?) throws -> (root: String, dest: String?) {
        let cwd = FileManager.default.currentDirectoryPath
        guard let output else { return (cwd, nil) }
        let absolute = output.startsWithSlash ? output : cwd + "/" + output
        var isDirectory: ObjCBool = false
        if output.endsWithSlash || (FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory) && isDirectory.boolValue) {
            return (absolute, nil)
        }
        let url = URL(fileURLWithPath: absolute)
        return (url.deletingLastPathComponent().path, url.lastPathComponent)
    }

    /// Runs the worker and the progress display until every transfer is final or a signal arrives.
    /// - Parameters:
    ///   - connection: the command's own connection, which reads the statuses and marks the worker stopped.
    private static func follow(
        _ ids: [Int64], connection: PostgresConnection, config: WorkerConfig, quiet: Bool, json: Bool
    ) throws -> Int32 {
        let store = TransferStore(connection)
        let progress = ProgressCounter(watching: ids)
        let worker = Worker(config: config, progress: progress)
        Signals.install()
        worker.start()
        var bar = ProgressBar(terminal: Output.stderrIsTerminal)
        var mark = progress.settledMark()
        // Whether all are final is checked after each wake, from the front of the list; the
        // progress line's figures read every open transfer's state, size and bytes, so they are
        // read at the bar's pace, less often while many are open (each costs the database a
        // microsecond or two a transfer). The final ones of a long list are never read again.
        var open = UnsettledList(ids)
        var list = GetListProgress(ids)
        var barRead = Date.distantPast
        while !open.isEmpty, !Signals.stopRequested {
            try open.check(store.unsettled)
            guard !open.isEmpty else { break }
            let pace = max(0.2, Double(open.count) / 10_000)
            if !quiet, Date().timeIntervalSince(barRead) >= pace {
                barRead = Date()
                let figures = try list.poll(sums: store.progress, statuses: store.statuses, live: progress.bytes(for:))
                let segments = ids.count == 1 ? StatusView.map(try store.segmentStates(ids[0]), width: 20) : ""
                bar.update(
                    bytes: figures.bytes, size: figures.size, segments: segments, state: list.state(figures),
                    note: figures.waiting.flatMap(StatusView.retrying).map { "retrying \($0)" },
                    until: figures.waiting?.retryIn.map { Date().addingTimeInterval($0) })
            }
            // The in-process worker says when it settled a transfer; the timeout is the backstop
            // (another worker, an operator) and the progress line's pace.
            progress.waitForSettled(since: mark, timeout: pace)
            mark = progress.settledMark()
        }
        if !quiet { bar.finish() }
        // Once more, for a stop asked for after the last check (a transfer gone counts as final:
        // the report says so).
        try open.check(store.unsettled)
        worker.stop()
        let drained = worker.waitUntilStopped(timeout: 10, markingStoppedOn: connection)
        if open.isEmpty { worker.abortStoppedUploads() }
        guard open.isEmpty else {
            Output.error("haul: interrupted\(drained ? "; progress kept" : ""): run the same command again to resume")
            return ExitCode.interrupted
        }
        let outcome = try report(ids, store: store, backend: config.backend, quiet: quiet, json: json)
        if outcome.canceled { worker.removeCanceledData() }
        if outcome.failures.isEmpty { return ExitCode.success }
        // A refusal to overwrite a user's file, or to save two URLs the origin names alike into
        // one file, is a usage error, as on the command line; otherwise the first failed URL's
        // code says the status (a canceled one, with no code, gives 1).
        return ExitStatus.of(outcome.failures)
    }
}
