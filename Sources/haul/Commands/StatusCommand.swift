import Foundation
import HaulCore
import HaulQueue

enum StatusCommand: Command {
    static let name = "status"
    static let summary = "show one transfer: state, progress, rate, segment map, error, digest"
    static let help = """
        usage: haul status ID [--json]
               haul status --batch NAME [--json]

        Shows a transfer's state, bytes done of its size, average rate, a map of its
        segments (# done, > running, . queued, ! failed), its error and digest.
        --json prints an object with at least id, state, size, bytes_done, error, dest.
        Exit status 1 if there is no such transfer.
        With --batch: the batch's counts by state, bytes, rate and its failures.
        While a transfer is unfinished and no worker has heartbeaten for 30 s, a warning
        says so (JSON: "warning"), since nothing will move until one runs.
        While an unfinished transfer does not run, "waiting" (JSON: "waiting", and
        "waiting_reason" for scripts) says why: it or its origin is paused (paused,
        origin-paused), no worker is alive (no-live-worker), it backs off after an error
        until a time (backing-off), its origin is at its host limit (host-limit), or all
        lanes are busy (lanes-busy).
        A transfer with mirrors (--mirror, --metalink) lists each one's state (healthy;
        resting until a time, or on trial, after it failed; demoted for good after a bad
        piece), the reason, bytes and failures (JSON: "mirrors", with "retry_after").
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: ["--batch"], flags: ["--json"])
        if let batch = arguments.value("--batch") {
            _ = try arguments.expect(0, "")
            let session = try DatabaseSession()
            defer { session.close() }
            return try BatchStatus.show(batch, json: arguments.has("--json"), session: session)
        }
        let id = try transferID(arguments.expect(1, "transfer ID")[0])
        let session = try DatabaseSession()
        defer { session.close() }
        let store = TransferStore(session.connection)
        guard let status = try store.status(id) else {
            throw HaulError(.noSuchTransfer, "there is no transfer \(id)", hint: "'haul list' shows the transfers there are")
        }
        let segments = try store.segmentStates(id)
        let mirrors = try store.mirrors(of: id)
        let reason = try WaitReason.of(session.connection, transfers: [id])[id]
        let warning = status.state.isFinal || status.state == .paused ? nil : try WorkerRegistry(session.connection).noLiveWorkerWarning()
        if arguments.has("--json") {
            var object = StatusView.json(status, segments: segments)
            object["warning"] = warning ?? NSNull()
            object["waiting"] = reason?.text ?? NSNull()
            object["waiting_reason"] = reason?.code ?? NSNull()
            if !mirrors.isEmpty { object["mirrors"] = MirrorView.json(mirrors) }
            Output.json(object)
        } else {
            // The warning line already says that no worker is alive.
            let shown = warning != nil && reason == .noLiveWorker(warning: warning ?? "") ? nil : reason?.detail
            let notes = (shown.map { "\n  waiting:   \($0)" } ?? "") + (warning.map { "\n  warning:   \($0)" } ?? "")
            let mirrorLines = MirrorView.lines(mirrors).map { "\n" + $0 }.joined()
            Output.line(StatusView.text(status, segments: segments) + mirrorLines + notes)
        }
        return ExitCode.success
    }

    /// Parses a transfer id argument.
    static func transferID(_ text: String) throws -> Int64 {
        guard let id = Int64(text), id > 0 else {
            throw HaulError.usage("'\(text)' is not a transfer id", hint: "ids are the numbers 'haul enqueue' prints and 'haul list' shows")
        }
        return id
    }
}
