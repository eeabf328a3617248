import Foundation
import HaulCore
import HaulPostgres
import HaulQueue

enum HostLimitCommand: Command {
    static let name = "host-limit"
    static let summary = "set or list the cluster-wide limit of running segments per origin host"
    static let help = """
        usage: haul host-limit set HOST[:PORT] N
               haul host-limit set '*' N        (the default for hosts without their own, 8 at first)
               haul host-limit unset HOST[:PORT]   (back to the default; 'unset *' restores 8)
               haul host-limit pause HOST[:PORT]   (the same as 'set HOST 0')
               haul host-limit resume HOST[:PORT]  (back to the limit it had when paused)
               haul host-limit list [--json]

        The whole fleet together never holds more than N running segments against
        HOST, whatever the number of workers: the limit is enforced inside the claim.
        HOST is named as in the URLs, with the port unless it is 80 or 443
        ('host-limit list' shows the names); a limit set on a host no transfer has
        come from says so on standard error.
        A limit of 0 pauses HOST: no new segment or probe of it starts; segments
        already running finish their current segment (they are not cut off), and
        its transfers wait, in their state, until it is resumed.
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: [], flags: ["--json"])
        let session = try DatabaseSession()
        defer { session.close() }
        switch arguments.positionals.first {
        case "set":
            let words = try arguments.expect(3, "HOST and N")
            let (host, limit) = try HostLimits.parse(host: words[1], limit: words[2])
            try setLimit(session.connection, host: host, limit: limit)
        case "pause":
            try setLimit(session.connection, host: HostLimits.parse(host: arguments.expect(2, "HOST")[1]), limit: 0)
        case "resume":
            let host = try HostLimits.parse(host: arguments.expect(2, "HOST")[1])
            guard let limit = try HostLimits.resume(session.connection, host: host) else {
                Output.line("\(host) was not paused; nothing changed")
                return ExitCode.success
            }
            Output.line("\(host): resumed, at most \(HostLimits.segments(limit))")
        case "unset":
            let host = try HostLimits.parse(host: arguments.expect(2, "HOST")[1])
            let had = try HostLimits.unset(session.connection, host: host)
            Output.line(
                host == "*"
                    ? "default limit: \(HostLimits.fallbackDefault) running segments per host"
                    : had ? "\(host): back to the default limit" : "\(host) had no limit of its own; nothing changed")
        case "list":
            _ = try arguments.expect(1, "")
            let rows = try HostLimits.list(session.connection)
            if arguments.has("--json") {
                Output.json(rows.map { ["host": $0.host, "limit": $0.limit, "explicit": $0.explicit, "running": $0.running, "paused": $0.limit == 0] })
            } else {
                Output.line("HOST                          LIMIT  RUNNING")
                for row in rows {
                    let name = row.host == "*" ? "* (default)" : row.host + (row.explicit ? "" : " (default)")
                    Output.line(
                        name.padding(toLength: 30, withPad: " ", startingAt: 0) + String(row.limit).padding(toLength: 7, withPad: " ", startingAt: 0)
                            + String(row.running) + (row.limit == 0 ? "  (paused)" : ""))
                }
            }
        default:
            throw HaulError.usage("haul host-limit takes 'set HOST N', 'unset HOST', 'pause HOST', 'resume HOST' or 'list'")
        }
        return ExitCode.success
    }

    /// Sets `host`'s limit and says so, with a note when no transfer has come from that host.
    private static func setLimit(_ conn: PostgresConnection, host: String, limit: Int) throws {
        let namesakes = try HostLimits.namesakes(conn, of: host)
        try HostLimits.set(conn, host: host, limit: limit)
        Output.line(HostLimits.describe(host: host, limit: limit))
        if let namesakes { Output.error(HostLimits.describeUnknown(host: host, namesakes: namesakes)) }
    }
}

enum WorkersCommand: Command {
    static let name = "workers"
    static let summary = "list worker processes: host, pid, roles, heartbeat, segments held, rate"
    static let help = """
        usage: haul workers [--all] [--json]

        Lists the workers that heartbeat into the database: id, host, pid, roles,
        version, start time, seconds since the last heartbeat, segments held now and
        the rate it received bytes at between its last two heartbeats ("measuring",
        null in JSON, until its second heartbeat; 0 once it is dead or stopped).
        A worker silent for more than 30 s is shown as dead (its
        leases expire and are rescued). --all includes stopped workers.
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: [], flags: ["--json", "--all"])
        _ = try arguments.expect(0, "")
        let session = try DatabaseSession()
        defer { session.close() }
        let list = try WorkerRegistry(session.connection).list(includeStopped: arguments.has("--all")).map(\.json)
        if arguments.has("--json") {
            Output.json(list)
            return ExitCode.success
        }
        Output.line("ID                          HOST             PID      STATE    HELD  RATE        HEARTBEAT  ROLES")
        for worker in list {
            let cells = [
                "\(worker["id"]!)".padding(toLength: 28, withPad: " ", startingAt: 0), "\(worker["host"]!)".padding(toLength: 17, withPad: " ", startingAt: 0),
                "\(worker["pid"]!)".padding(toLength: 9, withPad: " ", startingAt: 0), "\(worker["state"]!)".padding(toLength: 9, withPad: " ", startingAt: 0),
                "\(worker["segments_held"]!)".padding(toLength: 6, withPad: " ", startingAt: 0),
                ((worker["rate"] as? Double).map { "\(ByteSize.format(Int64($0)))/s" } ?? "measuring").padding(toLength: 12, withPad: " ", startingAt: 0),
                "\(worker["heartbeat_age"]!)s ago".padding(toLength: 11, withPad: " ", startingAt: 0),
                "\(worker["roles"]!)",
            ]
            Output.line(cells.joined())
        }
        return ExitCode.success
    }
}

enum PruneCommand: Command {
    static let name = "prune"
    static let summary = "delete finished transfers older than a retention"
    static let help = """
        usage: haul prune --older-than DURATION [--state done|failed|canceled]... [--dry-run] [--json]

        Deletes done, failed and canceled transfers that finished more than DURATION
        ago (e.g. 7d, 1h30m; 0s for all of them), with their segments, and batches left
        empty. Files on storage are not touched. Workers also prune by themselves with
        HAUL_RETENTION (default 7d). A canceled transfer whose partial data a worker has
        not removed yet is kept, and counted in a line of its own.
          --state STATE   only transfers in this final state (repeatable; default all three)
          --dry-run       count what would be deleted, delete nothing
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: ["--older-than", "--state"], flags: ["--json", "--dry-run"])
        _ = try arguments.expect(0, "")
        guard let age = try arguments.duration("--older-than", allowZero: true) else {
            throw HaulError.usage("--older-than is required", hint: "e.g. haul prune --older-than 7d")
        }
        var states = Retention.prunableStates
        if !arguments.all("--state").isEmpty {
            states = try arguments.all("--state").map { text in
                guard let state = TransferState(rawValue: text), state.isFinal else {
                    throw HaulError.usage("--state '\(text)' cannot be pruned", hint: "prune takes done, failed or canceled")
                }
                return state
            }
        }
        let session = try DatabaseSession()
        defer { session.close() }
        let dryRun = arguments.has("--dry-run")
        let count =
            dryRun
            ? try Retention.countPrunable(session.connection, olderThan: age, states: states)
            : try Retention.prune(session.connection, olderThan: age, states: states)
        let waiting = try Retention.countAwaitingCleanup(session.connection, olderThan: age, states: states)
        if arguments.has("--json") {
            Output.json([dryRun ? "would_delete" : "deleted": count, "skipped_awaiting_cleanup": waiting])
        } else {
            Output.line(
                "\(dryRun ? "would delete" : "deleted") \(count) finished transfer\(count == 1 ? "" : "s") (\(states.map(\.rawValue).joined(separator: ", ")))")
            if waiting > 0 {
                Output.line(
                    "kept \(waiting) canceled transfer\(waiting == 1 ? "" : "s") whose partial data a worker has not removed yet; a running worker does within a minute, then prune again"
                )
            }
        }
        return ExitCode.success
    }
}
