import HaulCore
import HaulQueue

enum ListCommand: Command {
    static let name = "list"
    static let summary = "list transfers, newest first"
    static let help = """
        usage: haul list [--state STATE] [--limit N] [--json]

        Lists transfers, newest first (at most 1000, or --limit). STATE is one of
        pending, planning, downloading, finalizing, done, failed, canceled, paused.
        --json prints an array of the objects 'haul status --json' prints.
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: ["--state", "--limit"], flags: ["--json"])
        _ = try arguments.expect(0, "")
        var state: TransferState?
        if let text = arguments.value("--state") {
            guard let value = TransferState(rawValue: text) else {
                throw HaulError.usage("--state '\(text)' is not a state", hint: "use one of \(TransferState.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            state = value
        }
        let session = try DatabaseSession()
        defer { session.close() }
        let transfers = try TransferStore(session.connection).list(state: state, limit: try arguments.positiveInt("--limit") ?? 1000)
        if arguments.has("--json") {
            Output.json(transfers.map { StatusView.json($0) })
            return ExitCode.success
        }
        Output.line(pad("ID", 7) + pad("STATE", 12) + pad("PROGRESS", 30) + "DEST / ERROR")
        for status in transfers {
            let note = StatusView.retrying(status).map { "retrying \($0)" } ?? status.error
            let tail = note.map { "\(status.dest ?? "-")  \($0)" } ?? (status.dest ?? "-")
            Output.line(pad(String(status.id), 7) + pad(status.state.rawValue, 12) + pad(StatusView.progress(status), 30) + tail)
        }
        return ExitCode.success
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
