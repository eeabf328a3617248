import Foundation
import HaulCore
import HaulMetalink
import HaulQueue

enum EnqueueCommand: Command {
    static let name = "enqueue"
    static let summary = "record a transfer for the workers to download"
    static let help = """
        usage: haul enqueue URL [--dest REL] [options] [--json]
               haul enqueue --manifest FILE|- --batch NAME [--skip-invalid] [options] [--json]

        Records a transfer of URL (http or https) into the storage root, where workers
        pick it up. Prints the new transfer's id. Nothing is written when any argument
        is invalid, or when an active transfer already writes DEST (exit status 2).

        With --manifest, each line is 'URL [DEST]' (DEST defaults to the URL's path;
        '#' starts a comment; more URLs of the same file may follow the first, separated
        by tabs as in aria2's input files: they are its mirrors) or a JSON object {"url", "dest", "checksum", "headers",
        "priority", "extract", "upload_to"}; the options below apply to every line.
        All or nothing: an invalid line (also one whose DEST another line or an active
        transfer writes) is reported with its number and nothing is inserted, unless
        --skip-invalid inserts the rest and lists the rejects.
        Enqueuing the same URL and DEST into the same batch again adds nothing.

          --dest REL            destination relative to the storage root (default: named
                                from Content-Disposition or the URL, like curl -OJ)
          --force               replace a file at the destination that haul did not write
                                (default: the transfer fails with destination-exists and the
                                file is kept; with --dest, a file haul published is replaced)
        \(TransferFlags.help)
          --lowest-speed RATE   give the lane back when a request stays under RATE for
          --lowest-speed-time D  D, instead of the worker's figures (1KiB and 30s by
                                default): retried later, failed with too-slow after
                                --max-attempts; 0 turns the rule off for this transfer
        \(MirrorFlags.help)
          --json                print {"id": N} (with --manifest: {"batch", "inserted", "existing", "rejected"})
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(
            words, options: TransferFlags.options.union(MirrorFlags.options).union(["--dest", "--manifest", "--batch"]),
            flags: TransferFlags.flags.union(MirrorFlags.flags).union(["--json", "--skip-invalid", "--force"]))
        if arguments.value("--manifest") != nil || arguments.value("--batch") != nil {
            return try enqueueManifest(arguments)
        }
        if let metalink = try MirrorFlags.metalink(arguments) { return try enqueueMetalink(metalink, arguments) }
        let url = try arguments.expect(1, "URL")[0]
        var request = try TransferFlags.build(url: url, dest: arguments.value("--dest"), arguments, try TransferFlags.secrets(arguments))
        request.options.replaceExisting = arguments.has("--force") ? true : nil
        request.mirrors = try MirrorFlags.mirrors(arguments)
        MirrorFlags.applyFlags(arguments, to: &request)
        let session = try DatabaseSession()
        defer { session.close() }
        let id = try TransferStore(session.connection).enqueue(request)
        if arguments.has("--json") {
            Output.json(["id": id])
        } else {
            Output.line("\(id)")
        }
        return ExitCode.success
    }

    /// `--metalink FILE`: one transfer per file it lists, named by it under `--dest DIR/` (or
    /// the storage root), each id on a line.
    static func enqueueMetalink(_ metalink: Metalink, _ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.isEmpty, arguments.all("--mirror").isEmpty else {
            throw HaulError.usage("--metalink lists the URLs itself", hint: "give either --metalink FILE or URL [--mirror URL...]")
        }
        let folder = arguments.value("--dest").map { $0.hasSuffix("/") ? $0 : $0 + "/" } ?? ""
        let secrets = try TransferFlags.secrets(arguments)
        let requests = try metalink.files.map { file in
            var request = try TransferFlags.build(url: file.mirrors[0].url, dest: folder + file.name, arguments, secrets)
            request.options.replaceExisting = arguments.has("--force") ? true : nil
            MirrorFlags.apply(file, to: &request)
            MirrorFlags.applyFlags(arguments, to: &request)
            return request
        }
        let session = try DatabaseSession()
        defer { session.close() }
        let store = TransferStore(session.connection)
        let ids = try requests.map { try store.enqueue($0) }
        if arguments.has("--json") {
            Output.json(["ids": ids])
        } else {
            for id in ids { Output.line("\(id)") }
        }
        return ExitCode.success
    }
}

extension EnqueueCommand {
    /// `--manifest FILE --batch NAME`: validate every line, then insert them all in one transaction.
    static func enqueueManifest(_ arguments: Arguments) throws -> Int32 {
        guard let source = arguments.value("--manifest"), let batch = arguments.value("--batch") else {
            throw HaulError.usage("--manifest and --batch go together", hint: "haul enqueue --manifest FILE --batch NAME")
        }
        _ = try arguments.expect(0, "")
        guard !batch.trimmingWhitespace().isEmpty else { throw HaulError.usage("--batch needs a name") }
        guard arguments.value("--dest") == nil else { throw HaulError.usage("--dest does not go with --manifest; put DEST on each line") }
        let text = try readManifest(source)
        var secrets = try TransferFlags.secrets(arguments)
        let netrc = secrets.netrc
        // The netrc's logins go to each line's own host, not to the placeholder's.
        secrets.netrc = nil
        var base = try TransferFlags.build(url: "http://manifest.invalid/", dest: nil, arguments, secrets)
        base.options.replaceExisting = arguments.has("--force") ? true : nil
        MirrorFlags.applyFlags(arguments, to: &base)
        var (numbered, invalid) = Manifest.parseNumbered(text, base: base)
        for index in numbered.indices { TransferFlags.authorize(&numbered[index].transfer, from: netrc) }
        try report(invalid, source: source, arguments)
        let session = try DatabaseSession()
        defer { session.close() }
        // One copy of the entries (a few hundred bytes a line) while they are recorded, not two.
        let lines = numbered.map(\.line)
        let entries = (consume numbered).map(\.transfer)
        let (_, inserted, busy) = try Batches(session.connection).enqueue(entries, batch: batch, skipBusy: arguments.has("--skip-invalid"))
        let busyRejects = busy.map { Manifest.Reject(line: lines[$0.index], reason: $0.error.description) }
        try report(busyRejects, source: source, arguments)
        let rejects = invalid + busyRejects
        let existing = entries.count - busy.count - inserted
        if arguments.has("--json") {
            Output.json(["batch": batch, "inserted": inserted, "existing": existing, "rejected": rejects.count])
        } else {
            Output.line("batch \(batch): \(inserted) enqueued, \(existing) already there, \(rejects.count) rejected")
        }
        return ExitCode.success
    }

    /// Prints rejected lines; without --skip-invalid any reject stops the command with nothing enqueued.
    private static func report(_ rejects: [Manifest.Reject], source: String, _ arguments: Arguments) throws {
        guard !rejects.isEmpty else { return }
        for reject in rejects.prefix(50) { Output.error("\(source): \(reject)") }
        if rejects.count > 50 { Output.error("\(source): … and \(rejects.count - 50) more invalid lines") }
        guard arguments.has("--skip-invalid") else {
            throw HaulError.usage(
                "\(rejects.count) invalid line\(rejects.count == 1 ? "" : "s") in the manifest; nothing was enqueued",
                hint: "fix them, or pass --skip-invalid to enqueue the rest")
        }
    }

    private static func readManifest(_ source: String) throws -> String {
        let data = source == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: source)
        guard let data else { throw HaulError.usage("cannot read manifest '\(source)'", hint: "give a readable file, or - for standard input") }
        guard let text = String(data: data, encoding: .utf8) else { throw HaulError.usage("manifest '\(source)' is not UTF-8 text") }
        return text
    }
}
