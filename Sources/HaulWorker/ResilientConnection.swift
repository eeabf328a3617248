import Foundation
import HaulCore
import HaulPostgres

/// A thread's own database connection that rides out outages: statements that fail because
/// the connection broke are retried after a capped backoff until they succeed or the worker
/// stops. One line is logged when an outage starts and one when it ends.
final class ResilientConnection {
    private let conninfo: String
    private let stopping: @Sendable () -> Bool
    private var connection: PostgresConnection?
    private var outageSince: Date?

    init(conninfo: String, stopping: @escaping @Sendable () -> Bool) {
        self.conninfo = conninfo
        self.stopping = stopping
    }

    /// Runs `body` with a live connection, retrying it while the database is unreachable.
    /// `body` must be safe to repeat: every statement Haul retries is fenced or guarded by state.
    /// - Parameter patient: when false, gives up (rethrows) as soon as the worker is stopping.
    func run<T>(patient: Bool = false, _ body: (PostgresConnection) throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                let conn = try connection ?? PostgresConnection(conninfo: conninfo)
                connection = conn
                let value = try body(conn)
                if let since = outageSince {
                    Log.info("database is back", [("outage_seconds", String(Int(Date().timeIntervalSince(since))))])
                    outageSince = nil
                }
                return value
            } catch let error as PostgresError where error.connectionLost {
                connection = nil
                if outageSince == nil {
                    outageSince = Date()
                    Log.warning("database unreachable, retrying", [("target", ConnectionTarget.describe(conninfo)), ("error", error.message)])
                }
                attempt += 1
                if stopping() && (!patient || attempt > 20) { throw error }
                Thread.sleep(forTimeInterval: min(5, 0.2 * Double(attempt)))
            }
        }
    }

    /// Opens the connection now if none is open, once, so that the first statement does not
    /// wait for it (a failure is left for that statement's retries).
    func connectAhead() {
        guard connection == nil else { return }
        connection = try? PostgresConnection(conninfo: conninfo)
    }

    /// Runs `body` patiently for a write whose loss is survivable (a release, a recorded failure):
    /// if it still fails, the lease it concerns simply expires and the rescuer re-queues the row.
    /// The failure is logged with `what`, never swallowed.
    func bestEffort(_ what: String, _ body: (PostgresConnection) throws -> Void) {
        do {
            try run(patient: true, body)
        } catch {
            Log.warning("could not \(what); its lease will expire and be rescued", [("error", "\(error)")])
        }
    }
}
