import Foundation
import HaulCore
import HaulPostgres

/// Reading the `workers` table: who is working against this database, and since when silent.
public struct WorkerRegistry {
    let db: PostgresConnection

    /// Works through `connection`, which the caller owns.
    public init(_ connection: PostgresConnection) {
        self.db = connection
    }

    /// A worker silent for longer than this many seconds is dead (its leases expire and are rescued).
    public static let deadAfter = 30.0

    /// One row of `haul workers`.
    public struct Entry: Sendable {
        public let id: String
        public let host: String
        public let pid: Int
        public let roles: String
        public let version: String
        public let startedAt: String
        /// Seconds since its last heartbeat.
        public let silentFor: Double
        public let stopped: Bool
        /// Running segments it holds now.
        public let segmentsHeld: Int
        /// Bytes per second it received between its last two heartbeats, whether or not it lives;
        /// `nil` until its second heartbeat.
        let lastRate: Double?

        /// `alive`, `dead` (silent past `deadAfter`) or `stopped`.
        public var state: String { stopped ? "stopped" : silentFor > WorkerRegistry.deadAfter ? "dead" : "alive" }
        /// Bytes per second it receives now: its last measured rate while it is alive, 0 once it
        /// is dead or stopped (a silent worker receives nothing, whatever it last reported), and
        /// `nil` while it is alive but has not been measured yet: a rate is the bytes between two
        /// heartbeats, so a worker has none in its first heartbeat interval, downloading or not.
        public var rate: Double? { state == "alive" ? lastRate : 0 }

        /// The worker as `/api/workers` and `haul workers --json` print it (`rate` null until
        /// measured; times and rates to a tenth).
        public var json: [String: Any] {
            [
                "id": id, "host": host, "pid": pid, "roles": roles, "version": version, "started_at": startedAt,
                "heartbeat_age": (silentFor * 10).rounded() / 10, "state": state, "segments_held": segmentsHeld,
                "rate": rate.map { ($0 * 10).rounded() / 10 } ?? NSNull(),
            ]
        }
    }

    /// Workers, oldest first; stopped ones only when `includeStopped`.
    public func list(includeStopped: Bool) throws -> [Entry] {
        try db.query(
            Statements.WorkerRegistry.list, [includeStopped]
        ).rows.map { row in
            Entry(
                id: try row.string("id"), host: try row.string("host"), pid: try row.int("pid"), roles: try row.string("roles"),
                version: try row.string("version"), startedAt: try row.string("started_at"), silentFor: try row.optionalDouble("silent") ?? 0,
                stopped: try row.bool("stopped"), segmentsHeld: try row.int("held"), lastRate: try row.optionalDouble("rate"))
        }
    }

    /// Seconds since any worker that has not stopped last heartbeated, `nil` when none has ever
    /// run (or all stopped cleanly). At most `deadAfter`: at least one worker is alive.
    public func silence() throws -> (seconds: Double?, everSeen: Bool) {
        let row = try db.query(
            Statements.WorkerRegistry.silence
        ).first
        let silent = try row?.optionalDouble("silent")
        let last = try row?.optionalDouble("last")
        return (silent ?? last, (try row?.int("n") ?? 0) > 0)
    }

    /// The warning `status` and `wait` print when no worker is alive, or `nil` when one is.
    public func noLiveWorkerWarning() throws -> String? {
        let (seconds, everSeen) = try silence()
        if let seconds, seconds <= Self.deadAfter { return nil }
        guard everSeen, let seconds else {
            return "no worker has ever run against this database; start one with 'haul worker --storage DIR'"
        }
        return "no worker has been seen for \(Self.describe(seconds)); is one running against this database?"
    }

    /// `45 s`, `2 min`, `3 h`, `2 d`.
    static func describe(_ seconds: Double) -> String {
        switch seconds {
        case ..<120: return "\(Int(seconds)) s"
        case ..<7200: return "\(Int(seconds / 60)) min"
        case ..<172_800: return "\(Int(seconds / 3600)) h"
        default: return "\(Int(seconds / 86400)) d"
        }
    }
}
