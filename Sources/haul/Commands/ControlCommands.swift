import Foundation
import HaulCore
import HaulQueue
import HaulStorage

/// `haul cancel|retry|pause|resume ID... | --batch NAME | --state STATE`: an operator action on
/// named transfers, or on every transfer a selector matches after a confirmation.
struct ControlCommand {
    let action: OperatorAction
    let summary: String
    let detail: String

    var help: String {
        """
        usage: haul \(action.rawValue) ID... [--json]
               haul \(action.rawValue) [--batch NAME] [--state STATE] [--host HOST] [--yes] [--json]

        \(detail)
        Named ids: each is acted on; one whose state does not allow it is refused with
        the reason, and the exit status is 1 if any was refused or does not exist.\(action == .pause ? "\nPausing a paused transfer changes nothing and succeeds." : "")
        Selectors (--batch, --state, --host, combined with AND): every matching transfer
        the action applies to; the others are skipped and counted. The count is shown
        and confirmed first: on a terminal you are asked, --yes skips the question, and
        without a terminal the command refuses (exit status 2) unless --yes is given.
          -y, --yes    act without asking\(action == .retry ? Self.retryOptions : "")
          --json       print {"changed": [...], "unchanged": [...], "refused": [...], "missing": [...]}
        """
    }

    /// The options only `retry` takes, as its help lists them.
    private static let retryOptions = """

          --force      replace files at the destinations that haul did not write (default: kept)
          --checksum ALGO:HEX
                       the digest the file must have from now on (one named transfer); a file
                       that failed its checksum and has it is published without a byte fetched
        """

    func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(
            words.map { $0 == "-y" ? "--yes" : $0 }, options: Set(["--batch", "--state", "--host"] + (action == .retry ? ["--checksum"] : [])),
            flags: Set(["--yes", "--json"] + (action == .retry ? ["--force"] : [])))
        let force = arguments.has("--force")
        let checksum = try arguments.value("--checksum").map { try Checksum(parsing: $0) }
        let ids = try arguments.positionals.map(StatusCommand.transferID)
        if checksum != nil && ids.count != 1 {
            throw HaulError.usage("--checksum gives the digest of one file: name one transfer id", hint: "e.g. 'haul retry 12 --checksum sha256:…'")
        }
        let batch = arguments.value("--batch"), host = try arguments.value("--host").map { try HostLimits.parse(host: $0) }
        let state = try ListCommand.state(arguments.value("--state"))
        let selecting = batch != nil || state != nil || host != nil
        guard selecting != !ids.isEmpty else {
            throw HaulError.usage(
                selecting ? "name transfer ids or select them with --batch/--state/--host, not both" : "missing transfer ID",
                hint: "e.g. 'haul \(action.rawValue) 12 13' or 'haul \(action.rawValue) --batch NAME'")
        }
        let session = try DatabaseSession()
        defer { session.close() }
        let store = TransferStore(session.connection)
        guard selecting else {
            var outcome = try store.apply(action, to: ids, replacingExisting: force, expecting: checksum)
            try followUp(outcome.changed, store)
            if action == .cancel { try finishCleanups(&outcome, store) }
            return report(outcome, json: arguments.has("--json"), named: true)
        }

        if let batch, try !store.batchExists(batch) {
            throw BatchesCommand.noSuchBatch(batch)
        }
        let matched = try store.select(state: state, batch: batch, host: host)
        let chosen = matched.filter { action.verdict(transfer: $0.id, state: $0.state) == .apply }.map(\.id)
        let what = [batch.map { "batch \($0)" }, state.map { "state \($0.rawValue)" }, host.map { "host \($0)" }].compactMap { $0 }.joined(separator: ", ")
        let skipped = matched.count - chosen.count
        if chosen.isEmpty {
            if arguments.has("--json") {
                Output.json(["changed": [Int64](), "unchanged": [Int64](), "refused": [Any](), "missing": [Int64]()])
            } else {
                Output.line(
                    "nothing to \(action.rawValue): \(matched.count) transfer\(matched.count == 1 ? "" : "s") match \(what), none in a state that allows it")
            }
            return ExitCode.success
        }
        if !arguments.has("--yes") {
            let question =
                "\(action.rawValue) \(chosen.count) transfer\(chosen.count == 1 ? "" : "s") (\(what)\(skipped > 0 ? "; \(skipped) more match but are skipped" : ""))?"
            guard let answer = Confirmation.ask(question) else {
                throw HaulError.usage("\(question.dropLast()) needs confirmation", hint: "add --yes to confirm (there is no terminal to ask on)")
            }
            guard answer else {
                Output.error("haul: nothing changed")
                return ExitCode.failure
            }
        }
        var outcome = try store.apply(action, to: chosen, replacingExisting: force)
        try followUp(outcome.changed, store)
        // Rows that changed state between the count and the locked update are skipped, not errors.
        outcome.refused = []
        return report(outcome, json: arguments.has("--json"), named: false, skipped: skipped)
    }

    /// Prints what happened; exit 1 if a named transfer was refused or missing.
    private func report(_ outcome: ActionOutcome, json: Bool, named: Bool, skipped: Int = 0) -> Int32 {
        if json {
            Output.json([
                "changed": outcome.changed, "unchanged": outcome.unchanged, "missing": outcome.missing,
                "refused": outcome.refused.map { ["id": $0.id, "error": $0.error.description] },
            ])
        } else if named {
            for id in outcome.changed { Output.line("transfer \(id): \(action.rawValue) done") }
            for id in outcome.unchanged {
                Output.line(
                    action == .cancel ? "transfer \(id): already canceled; its partial data is removed" : "transfer \(id): already paused, nothing to do")
            }
        } else {
            Output.line(
                "\(action.rawValue): \(outcome.changed.count) transfer\(outcome.changed.count == 1 ? "" : "s") changed\(skipped > 0 ? ", \(skipped) skipped (state does not allow it)" : "")"
            )
        }
        if !json {
            for refusal in outcome.refused { Output.error("haul: \(refusal.error.description)") }
            for id in outcome.missing { Output.error("haul: there is no transfer \(id); 'haul list' shows the transfers there are") }
        }
        if outcome.refused.isEmpty && outcome.missing.isEmpty { return ExitCode.success }
        // Refusing to bring back a transfer whose destination another one writes is the same
        // refusal as at enqueue: a usage error (exit 2). Any other refusal is a failure (exit 1).
        return outcome.refused.allSatisfy { $0.error.code == .destinationBusy } && outcome.missing.isEmpty ? ExitCode.usage : ExitCode.failure
    }

    /// What a changed `haul get` transfer needs beyond its row: a canceled one's partial file
    /// is removed here, and a retried one is run by its own `haul get`, not by a worker. The
    /// transfers are looked up in one statement, whatever their number: the fleet's transfers
    /// (all of a batch's) need nothing here.
    private func followUp(_ changed: [Int64], _ store: TransferStore) throws {
        switch action {
        case .cancel:
            for (id, files) in try store.localCleanups(changed).sorted(by: { $0.key < $1.key }) { try removeLocalPartial(id, files, store) }
        case .retry:
            for (id, target) in try store.localTargets(of: changed).sorted(by: { $0.key < $1.key }) {
                // A `haul get` transfer is pinned to the get that runs it: no worker picks it up.
                Output.error("transfer \(id) belongs to 'haul get': run the same 'haul get' again (saving to \(target)) to retry it")
            }
        case .pause, .resume: break
        }
    }

    /// A `haul get` killed before it removed its canceled transfer's partial file leaves the file
    /// behind: cancelling that transfer again removes it, and is then no refusal (the transfer
    /// is where the action leads). A canceled transfer with nothing left is refused as before.
    private func finishCleanups(_ outcome: inout ActionOutcome, _ store: TransferStore) throws {
        let waiting = try store.localCleanups(outcome.refused.map(\.id))
        for refusal in outcome.refused {
            guard let files = waiting[refusal.id], try removeLocalPartial(refusal.id, files, store) else { continue }
            outcome.refused.removeAll { $0.id == refusal.id }
            outcome.unchanged.append(refusal.id)
        }
    }

    /// A canceled `haul get` transfer: its partial file lies in the folder that get saved into, which
    /// no worker's storage root holds, so the command removes it itself when that folder is here.
    /// A partial file a running haul process writes is left to it: the get of this very transfer,
    /// which removes it as it stops, or another download of that name, which this transfer was
    /// refused (`destination-busy`) and which is not this transfer's to remove.
    /// - Returns: whether it removed the partial data.
    @discardableResult
    private func removeLocalPartial(_ id: Int64, _ pending: TransferStore.LocalFiles, _ store: TransferStore) throws -> Bool {
        guard FileManager.default.fileExists(atPath: pending.root) else { return false }
        let files = try TransferFiles(root: try StorageRoot(pending.root), relative: pending.dest)
        if let held = files.partialsHeld(generation: pending.generation).first {
            Output.error("left \(held) of transfer \(id): a running haul process writes it (a running get of this transfer removes it as it stops)")
            return false
        }
        guard let cleanup = try store.claimLocalCleanup(id) else { return false }
        files.removeTemporaries(generation: cleanup.generation)
        Output.error("removed the partial data of transfer \(id) from \(cleanup.root)")
        return true
    }

    static let all: [ControlCommand] = [
        ControlCommand(
            action: .cancel, summary: "stop transfers for good and remove their partial data",
            detail: """
                In-flight segments stop at their next checkpoint; a worker removes the partial data (for a
                'haul get' transfer, this command removes it, or the get itself if it is still running).
                A canceled get's partial data that its killed get left behind is removed by cancelling it again.
                """),
        ControlCommand(
            action: .retry, summary: "resume failed transfers (only what is missing) or start canceled ones over",
            detail: """
                Failed segments are queued again with fresh attempts; bytes already checkpointed are kept, and a
                transfer that failed while finalizing redoes only the stage that failed (publish, extraction or
                upload). A canceled transfer, or one whose origin changed, starts over. A transfer of 'haul get'
                runs when that same 'haul get' command is run again.
                """),
        ControlCommand(
            action: .pause, summary: "pause transfers, keeping their progress",
            detail: "Running segments are released at their next checkpoint; 'haul resume ID' continues."),
        ControlCommand(
            action: .resume, summary: "continue paused transfers",
            detail: "The transfer goes back to where it was paused."),
    ]
}

/// Asking a yes/no question on the terminal before a bulk change.
enum Confirmation {
    /// Asks `question [y/N]` on stderr and reads the answer from stdin.
    /// - Returns: `nil` when stdin or stderr is not a terminal (nobody to ask), else whether the answer was yes.
    static func ask(_ question: String) -> Bool? {
        guard isatty(0) == 1, isatty(2) == 1 else { return nil }
        StandardStream.write(question + " [y/N] ", to: 2)
        let answer = readLine()?.trimmingWhitespace().lowercased() ?? ""
        return answer == "y" || answer == "yes"
    }
}
