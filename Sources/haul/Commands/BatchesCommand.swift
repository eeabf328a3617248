import HaulCore
import HaulQueue

enum BatchesCommand: Command {
    static let name = "batches"
    static let summary = "list batches, newest first: counts done, failed, active, paused, canceled"
    static let help = """
        usage: haul batches [--limit N] [--json]

        Lists the batches 'haul enqueue --manifest FILE --batch NAME' made, newest
        first (at most 200, or --limit): how many of each batch's transfers are done,
        failed, active (pending, planning, downloading or finalizing), paused and
        canceled, and when the batch was made. 'haul status --batch NAME' shows one
        batch's bytes, rate and failures; 'haul list --batch NAME' its transfers.
        --json prints an array of {"name", "created_at", "total", "states"}, the
        dashboard's /api/batches.
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: ["--limit"], flags: ["--json"])
        _ = try arguments.expect(0, "")
        let limit = try arguments.positiveInt("--limit") ?? 200
        let session = try DatabaseSession()
        defer { session.close() }
        let batches = try FleetView(session.connection).batches(limit: limit)
        if arguments.has("--json") {
            Output.json(batches.map(\.json))
            return ExitCode.success
        }
        guard !batches.isEmpty else {
            Output.line("no batches yet; 'haul enqueue --manifest FILE --batch NAME' makes one")
            return ExitCode.success
        }
        // A name is shown without control characters, which could drive the terminal.
        let names = batches.map { SafeText.cleanLine($0.name) }
        let width = max(4, names.map(\.count).max() ?? 0) + 2
        Output.line(
            Output.cell("NAME", width) + Output.cell("DONE", 16) + Output.cell("FAILED", 8) + Output.cell("ACTIVE", 8) + Output.cell("PAUSED", 8)
                + Output.cell("CANCELED", 10) + "CREATED")
        for (batch, name) in zip(batches, names) {
            let count = { (state: TransferState) in batch.countsByState[state] ?? 0 }
            let active = count(.pending) + count(.planning) + count(.downloading) + count(.finalizing)
            Output.line(
                Output.cell(name, width) + Output.cell("\(count(.done))/\(batch.total)", 16) + Output.cell(String(count(.failed)), 8)
                    + Output.cell(String(active), 8)
                    + Output.cell(String(count(.paused)), 8) + Output.cell(String(count(.canceled)), 10) + wholeSeconds(batch.createdAt))
        }
        return ExitCode.success
    }

    /// The error for a batch name that names no batch.
    static func noSuchBatch(_ name: String) -> HaulError {
        HaulError(
            .noSuchBatch, "there is no batch '\(name)'",
            hint: "'haul batches' lists the batches there are; 'haul enqueue --manifest FILE --batch NAME' makes one")
    }

    /// A PostgreSQL timestamp without its fraction of a second (`2026-12-02 02:57:16+00`).
    static func wholeSeconds(_ timestamp: String) -> String {
        guard let dot = timestamp.firstIndex(of: ".") else { return timestamp }
        let rest = timestamp[timestamp.index(after: dot)...].drop { $0.isNumber }
        return String(timestamp[..<dot]) + rest
    }
}
