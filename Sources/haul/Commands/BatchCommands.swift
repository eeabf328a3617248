import Foundation
import HaulCore
import HaulPostgres
import HaulQueue

/// `haul status --batch NAME`: one batch's counts by state, bytes, rate, ETA and a bar.
enum BatchStatus {
    static func show(_ name: String, json: Bool, session: DatabaseSession) throws -> Int32 {
        guard let summary = try Batches(session.connection).summary(name) else {
            throw BatchesCommand.noSuchBatch(name)
        }
        if json {
            Output.json([
                "batch": name, "total": summary.total, "states": TransferState.named(summary.countsByState), "bytes_done": summary.bytesDone,
                "bytes_known": summary.bytesKnown,
                "unchanged": summary.unchanged,
                "rate": summary.rate ?? NSNull(), "finished": summary.isFinished,
                "failures": summary.failures.map { ["id": $0.id, "error": $0.error] },
            ])
            return ExitCode.success
        }
        let done = summary.countsByState[.done] ?? 0
        let counts = TransferState.allCases.compactMap { state in summary.countsByState[state].map { "\(state.rawValue) \($0)" } }.joined(separator: ", ")
        Output.line("batch \(name): \(WaitCommand.done(done, of: summary.total, unchanged: summary.unchanged)); \(counts)")
        if summary.unchanged < summary.total {  // a bar of nothing to fetch says nothing
            let size = max(summary.bytesKnown, summary.bytesDone)
            if size > 0 {
                Output.line(ProgressBar.render(bytes: summary.bytesDone, size: size, rate: summary.rate ?? 0, segments: "", state: ""))
            } else {
                // No probe has answered yet: a bar has nothing to fill, and "0 B 0 B/s" says nothing.
                Output.line("  fetched: nothing yet, no size known")
            }
        }
        for failure in summary.failures { Output.line("  failed \(failure.id): \(failure.error)") }
        if !summary.isFinished, let warning = try WorkerRegistry(session.connection).noLiveWorkerWarning() { Output.line("  warning: \(warning)") }
        return ExitCode.success
    }
}

enum WaitCommand: Command {
    static let name = "wait"
    static let summary = "wait for transfers or a batch to finish (for scripts and CronJobs)"
    static let help = """
        usage: haul wait ID... [--timeout DURATION]
               haul wait --batch NAME [--timeout DURATION]

        Waits until every named transfer (or every transfer of the batch) is done,
        failed or canceled, printing progress (counts, bytes, rate) every few seconds on
        stderr, and a warning while no worker has heartbeaten for 30 s.
        A restart or failover of PostgreSQL is waited out (one line when the
        connection is lost, one when it is back).
        Exit status: 0 all done, 1 any failed or was canceled, 2 bad arguments,
        3 the database stayed unreachable for 5 minutes, 124 the timeout passed first.
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: ["--batch", "--timeout"], flags: [])
        let timeout = try arguments.duration("--timeout")
        let batch = arguments.value("--batch")
        let ids = try arguments.positionals.map(StatusCommand.transferID)
        guard (batch == nil) != ids.isEmpty else { throw HaulError.usage("name transfer ids or one --batch, not both or neither") }
        let session = try DatabaseSession()
        defer { session.close() }
        let deadline = timeout.map { Date(timeIntervalSinceNow: $0) }
        var waiting = Waiting(batch: batch, ids: ids, deadline: deadline)
        var connection = session.connection
        // A restart or failover of PostgreSQL is ridden out, as the workers ride it out: the
        // transfers go on meanwhile, and a script must not read a lost connection as a failure.
        var outageSince: Date?
        while true {
            do {
                if outageSince != nil {
                    connection = try PostgresConnection(conninfo: session.conninfo)
                    Output.error("haul: the database is back; still waiting")
                    outageSince = nil
                }
                return try waiting.run(on: connection)
            } catch let error as PostgresError where error.connectionLost || outageSince != nil {
                let since = outageSince ?? Date()
                if outageSince == nil { Output.error("haul: lost the database (\(error.message)); waiting for it to come back") }
                outageSince = since
                if let deadline, Date() >= deadline {
                    Output.error("haul: timed out waiting: the database was unreachable")
                    return ExitStatus.timeout
                }
                guard Date().timeIntervalSince(since) < Self.outageLimit else {
                    let error = HaulError(
                        .databaseUnreachable, "the database was unreachable for \(Int(Self.outageLimit)) s while waiting",
                        hint: "the transfers may still be running: 'haul wait' again once it is back")
                    Output.error("haul: \(error.description)")
                    return Self.databaseLost
                }
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }

    /// How long `wait` keeps trying to reach a lost database before it gives up…
    static let outageLimit: Double = 300
    /// …with this exit status, which a script can tell from a failed transfer's.
    static let databaseLost = ExitStatus.databaseUnreachable

    /// One wait's progress across reconnections: what it waits for and when it last reported.
    private struct Waiting {
        let batch: String?
        let ids: [Int64]
        let deadline: Date?
        var lastReport = Date.distantPast

        init(batch: String?, ids: [Int64], deadline: Date?) {
            self.batch = batch
            self.ids = ids
            self.deadline = deadline
        }

        /// Waits on `connection` until the transfers are final or the deadline passes.
        /// - Returns: the exit status. - Throws: a lost connection, for the caller to reconnect.
        mutating func run(on connection: PostgresConnection) throws -> Int32 {
            // Workers notify when transfers finish: a script waits for the last file by a round trip,
            // not by a polling period, and the database is not polled often meanwhile. Behind a
            // pooler the LISTEN would stay on a server session other clients are then lent (and
            // notices would not reach this one): there, wait only polls.
            let listens = !connection.throughPooler
            if listens { try connection.listen(TransferStore.finishedChannel) }
            defer { if listens { _ = try? connection.query("UNLISTEN *") } }
            while true {
                let polled = Date()
                // Between reports a batch is checked with one cheap statement; the full summary only when it is done.
                let due = Date().timeIntervalSince(lastReport) >= 5 || deadline.map { Date() >= $0 } == true
                if let batch, !due, try Batches(connection).hasUnfinished(batch) == true {
                    try WaitCommand.awaitFinished(connection, listening: listens, cost: Date().timeIntervalSince(polled), until: deadline)
                    continue
                }
                let (finished, failed, line) = try WaitCommand.poll(batch: batch, ids: ids, connection: connection)
                let cost = Date().timeIntervalSince(polled)
                if finished {
                    Output.error(line)
                    return failed ? ExitCode.failure : ExitCode.success
                }
                if let deadline, Date() >= deadline {
                    Output.error("haul: timed out waiting: \(line)")
                    return ExitStatus.timeout
                }
                if Date().timeIntervalSince(lastReport) >= 5 {
                    let warning = try WorkerRegistry(connection).noLiveWorkerWarning()
                    Output.error(line + (warning.map { "; warning: \($0)" } ?? ""))
                    lastReport = Date()
                }
                try WaitCommand.awaitFinished(connection, listening: listens, cost: cost, until: deadline)
            }
        }
    }

    /// Waits for a notification that transfers finished, at most until the next poll is due:
    /// a quarter second, or ten times what the last poll cost (at most a tenth of the time on
    /// the database when the batch is big), at most a second, and never past `deadline`. The
    /// polls catch final states that nobody notified (an older worker, a path without a notice).
    /// A connection not `listening` (behind a pooler) sleeps until the next poll.
    private static func awaitFinished(_ connection: PostgresConnection, listening: Bool, cost: Double, until deadline: Date?) throws {
        let period = min(1, max(0.25, cost * 10))
        let timeout = deadline.map { min(period, max(0, $0.timeIntervalSinceNow)) } ?? period
        if listening {
            _ = try connection.waitForNotifications(timeout: timeout)
        } else {
            Thread.sleep(forTimeInterval: timeout)
        }
    }

    private static func poll(batch: String?, ids: [Int64], connection: PostgresConnection) throws -> (finished: Bool, failed: Bool, line: String) {
        if let batch {
            guard let summary = try Batches(connection).summary(batch) else {
                throw BatchesCommand.noSuchBatch(batch)
            }
            let failed = (summary.countsByState[.failed] ?? 0) + (summary.countsByState[.canceled] ?? 0)
            let bytes = progress(done: summary.bytesDone, known: summary.bytesKnown, rate: summary.rate)
            return (
                summary.isFinished, failed > 0,
                "batch \(batch): \(done(summary.countsByState[.done] ?? 0, of: summary.total, unchanged: summary.unchanged)), \(failed) failed or canceled, \(bytes)"
            )
        }
        let store = TransferStore(connection)
        let statuses = try store.statuses(ids)
        let known = Set(statuses.map(\.id))
        if let missing = ids.first(where: { !known.contains($0) }) {
            throw HaulError(.noSuchTransfer, "there is no transfer \(missing)", hint: "'haul list' shows the transfers there are")
        }
        let done = statuses.filter { $0.state == .done }.count
        let failed = statuses.filter { $0.state == .failed || $0.state == .canceled }.count
        // While something downloads: the sum of their rates; once all are final: their average rates' sum.
        let moving = statuses.filter { $0.state == .downloading }
        let rate = (moving.isEmpty && statuses.allSatisfy(\.state.isFinal) ? statuses : moving).compactMap(\.rate).reduce(0, +)
        let fetching = statuses.filter { !$0.unchanged }
        let bytes = progress(done: fetching.map(\.bytesDone).reduce(0, +), known: fetching.compactMap(\.size).reduce(0, +), rate: rate)
        let line = "\(Self.done(done, of: ids.count, unchanged: statuses.count - fetching.count)), \(failed) failed or canceled, \(bytes)"
        return (statuses.allSatisfy(\.state.isFinal), failed > 0, line)
    }

    /// `3/5 done`, or `3/5 done (2 unchanged)` when the origin answered `304 Not Modified` for
    /// some: files kept whole, whose bytes the figures after it leave out.
    static func done(_ done: Int, of total: Int, unchanged: Int) -> String {
        "\(done)/\(total) done" + (unchanged > 0 ? " (\(unchanged) unchanged)" : "")
    }

    /// `1.2 GiB / 4.0 GiB at 35.0 MiB/s` (the rate only while something moves).
    static func progress(done: Int64, known: Int64, rate: Double?) -> String {
        let total = known > 0 ? "\(ByteSize.format(done)) / \(ByteSize.format(max(known, done)))" : ByteSize.format(done)
        guard let rate, rate > 0 else { return total }
        return "\(total) at \(ByteSize.format(Int64(rate)))/s"
    }
}
