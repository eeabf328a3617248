import Foundation
import HaulCore
import HaulQueue
import HaulStorage

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
        let store = TransferStore(session.connection)
        try store.apply(action, to: id)
        Output.line("transfer \(id): \(action.rawValue) done")
        if action == .cancel { try removeLocalPartial(id, store) }
        if action == .retry, let target = try store.localTarget(of: id) {
            // A `haul get` transfer is pinned to the get that runs it: no worker picks it up.
            Output.error("transfer \(id) belongs to 'haul get': run the same 'haul get' again (saving to \(target)) to retry it")
        }
        return ExitCode.success
    }

    /// A canceled `haul get` transfer: its partial file lies in the folder that get saved into, which
    /// no worker's storage root holds, so the command removes it itself when that folder is here.
    private func removeLocalPartial(_ id: Int64, _ store: TransferStore) throws {
        guard let cleanup = try store.claimLocalCleanup(id), FileManager.default.fileExists(atPath: cleanup.root) else { return }
        let files = try TransferFiles(root: try StorageRoot(cleanup.root), relative: cleanup.dest)
        files.removeTemporaries(generation: cleanup.generation)
        Output.error("removed the partial data of transfer \(id) from \(cleanup.root)")
    }

    static let all: [ControlCommand] = [
        ControlCommand(
            action: .cancel, summary: "stop a transfer for good and remove its partial data",
            detail: """
                In-flight segments stop at their next checkpoint; a worker removes the partial data (for a
                'haul get' transfer, this command removes it, or the get itself if it is still running).
                """),
        ControlCommand(
            action: .retry, summary: "resume a failed transfer (only what is missing) or start a canceled one over",
            detail: """
                Failed segments are queued again with fresh attempts; bytes already checkpointed are kept, and a
                transfer that failed while finalizing redoes only the stage that failed (publish, extraction or
                upload). A canceled transfer, or one whose origin changed, starts over. A transfer of 'haul get'
                runs when that same 'haul get' command is run again.
                """),
        ControlCommand(
            action: .pause, summary: "pause a transfer, keeping its progress",
            detail: "Running segments are released at their next checkpoint; 'haul resume ID' continues."),
        ControlCommand(
            action: .resume, summary: "continue a paused transfer",
            detail: "The transfer goes back to where it was paused."),
    ]
}
