import Foundation
import HaulCore
import HaulQueue

enum ListCommand: Command {
    static let name = "list"
    static let summary = "list transfers, newest first"
    static let help = """
        usage: haul list [--state STATE] [--batch NAME] [--host HOST[:PORT]] [--limit N] [--json]

        Lists transfers, newest first (at most 1000, or --limit). STATE is one of
        pending, planning, downloading, finalizing, done, failed, canceled, paused;
        --batch keeps one batch's transfers, --host those of one origin host (as
        'haul host-limit list' names it). The filters combine. A transfer that does not
        run says why ('waits: ...', as 'haul status' does).
        --json prints an array of the objects 'haul status --json' prints, "waiting"
        and "waiting_reason" included.
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: ["--state", "--limit", "--batch", "--host"], flags: ["--json"])
        _ = try arguments.expect(0, "")
        let state = try Self.state(arguments.value("--state"))
        let limit = try arguments.positiveInt("--limit") ?? 1000
        let session = try DatabaseSession()
        defer { session.close() }
        let store = TransferStore(session.connection)
        if let batch = arguments.value("--batch"), try !store.batchExists(batch) {
            throw BatchesCommand.noSuchBatch(batch)
        }
        let host = try arguments.value("--host").map { try HostLimits.parse(host: $0) }
        let transfers = try store.list(state: state, batch: arguments.value("--batch"), host: host, limit: limit)
        let waiting = try WaitReason.of(session.connection, transfers: transfers.filter { !$0.state.isFinal }.map(\.id))
        if arguments.has("--json") {
            Output.json(
                transfers.map { status in
                    var object = StatusView.json(status)
                    object["waiting"] = waiting[status.id]?.text ?? NSNull()
                    object["waiting_reason"] = waiting[status.id]?.code ?? NSNull()
                    return object
                })
            return ExitCode.success
        }
        Output.line(Output.cell("ID", 7) + Output.cell("STATE", 12) + Output.cell("PROGRESS", 30) + "DEST / ERROR")
        for status in transfers {
            let note = StatusView.retrying(status).map { "retrying \($0)" } ?? waiting[status.id]?.text ?? status.error
            // A destination recorded before control characters were refused shows them as U+FFFD.
            let dest = status.dest.map(SafeText.cleanLine) ?? "-"
            let tail = note.map { "\(dest)  \($0)" } ?? dest
            Output.line(Output.cell(String(status.id), 7) + Output.cell(status.state.rawValue, 12) + Output.cell(StatusView.progress(status), 30) + tail)
        }
        return ExitCode.success
    }

    /// Parses a `--state` value.
    static func state(_ text: String?) throws -> TransferState? {
        guard let text else { return nil }
        guard let value = TransferState(rawValue: text) else {
            let hint = Suggestion.hint(for: text, among: TransferState.allCases.map(\.rawValue))
            throw HaulError.usage(
                "--state '\(text)' is not a state",
                hint: (hint.isEmpty ? "" : hint + " ") + "use one of \(TransferState.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }
}
