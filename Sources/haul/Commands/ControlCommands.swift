import HaulCore
import HaulQueue

/// `haul cancel|retry|pause|resume ID`: one operator action on one transfer.
struct ControlCommand {
    let action: OperatorAction
    let summary: String
    let detail: String

    var help: String {
        """
        usage: haul \(action.rawValue) ID

        \(detail)
        Refuses (exit status 1) when the transfer's state does not allow it, saying why.
        """
    }

    func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: [], flags: [])
        let id = try StatusCommand.transferID(arguments.expect(1, "transfer ID")[0])
        let session = try DatabaseSession()
        defer { session.close() }
        try TransferStore(session.connection).apply(action, to: id)
        Output.line("transfer \(id): \(action.rawValue) done")
        return ExitCode.success
    }

    static let all: [ControlCommand] = [
        ControlCommand(
            action: .cancel, summary: "stop a transfer for good and remove its partial data",
            detail: "In-flight segments stop at their next checkpoint; a worker removes the partial data."),
        ControlCommand(
            action: .retry, summary: "resume a failed transfer (only what is missing) or start a canceled one over",
            detail: """
                Failed segments are queued again with fresh attempts; bytes already checkpointed are kept, and a
                transfer that failed while finalizing redoes only the stage that failed (publish, extraction or
                upload). A canceled transfer, or one whose origin changed, starts over.
                """),
        ControlCommand(
            action: .pause, summary: "pause a transfer, keeping its progress",
            detail: "Running segments are released at their next checkpoint; 'haul resume ID' continues."),
        ControlCommand(
            action: .resume, summary: "continue a paused transfer",
            detail: "The transfer goes back to where it was paused."),
    ]
}
