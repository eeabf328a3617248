import HaulCore
import HaulQueue

enum EnqueueCommand: Command {
    static let name = "enqueue"
    static let summary = "record a transfer for the workers to download"
    static let help = """
        usage: haul enqueue URL [--dest REL] [options] [--json]

        Records a transfer of URL (http or https) into the storage root, where workers
        pick it up. Prints the new transfer's id. Nothing is written when any argument
        is invalid (exit status 2).

          --dest REL            destination relative to the storage root (default: named
                                from Content-Disposition or the URL, like curl -OJ)
        \(TransferFlags.help)
          --json                print {"id": N}
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: TransferFlags.options.union(["--dest"]), flags: TransferFlags.flags.union(["--json"]))
        let url = try arguments.expect(1, "URL")[0]
        let request = try TransferFlags.build(url: url, dest: arguments.value("--dest"), arguments)
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
}
