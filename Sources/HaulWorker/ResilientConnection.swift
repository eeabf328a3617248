import Foundation
import HaulCore
import HaulPostgres

/// A thread's way to the database that rides out outages: statements that fail because the
/// connection broke are retried after a capped backoff until they succeed or the worker
/// stops. One line is logged when an outage starts and one when it ends.
///
/// Several may share one `DatabaseLink` (see `DatabaseLinks`): their statements then run one
/// `run` at a time.
final class ResilientConnection {
    private let link: DatabaseLink
    private let stopping: @Sendable () -> Bool

    /// - Parameters:
    ///   - link: the connection, perhaps shared with other threads, opened at the first statement.
    ///   - stopping: when this thread gives up retrying (see `run`).
    init(link: DatabaseLink, stopping: @escaping @Sendable () -> Bool) {
        self.link = link
        self.stopping = stopping
    }

    /// Runs `body` with a live connection, retrying it while the database is unreachable.
    /// `body` must be safe to repeat: every statement Haul retries is fenced or guarded by state.
    /// A shared connection is free for the other threads while this one waits to retry.
    /// - Parameter patient: when false, gives up (rethrows) as soon as the worker is stopping.
    func run<T>(patient: Bool = false, _ body: (PostgresConnection) throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try link.withConnection(body)
            } catch let error as PostgresError where error.connectionLost {
                attempt += 1
                if stopping() && (!patient || attempt > 20) { throw error }
                Thread.sleep(forTimeInterval: min(5, 0.2 * Double(attempt)))
            }
        }
    }

    /// Opens the connection now if none is open, once, so that the first statement does not
    /// wait for it (a failure is left for that statement's retries).
    func connectAhead() {
        link.connectAhead()
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

/// One database connection, opened when first needed and again after it broke, used by one
/// thread at a time: the threads sharing it take turns, a whole `withConnection` each (so a
/// transaction inside one is never interleaved with another thread's statements). A thread
/// may nest its own turns.
final class DatabaseLink: @unchecked Sendable {
    private let conninfo: String
    /// Guards `connection` and `outageSince`, and the connection's use.
    private let lock = NSRecursiveLock()
    private var connection: PostgresConnection?
    private var outageSince: Date?
    private let contact: WorkerMetrics?

    /// - Parameter connection: an open connection to use first (one is opened when needed).
    /// - Parameter contact: told when a statement ran and when one found the database unreachable.
    init(conninfo: String, adopting connection: PostgresConnection? = nil, contact: WorkerMetrics? = nil) {
        self.conninfo = conninfo
        self.connection = connection
        self.contact = contact
    }

    /// Runs `body` on the connection, opened first if none is open, alone on it. A connection
    /// that broke is dropped (the next turn opens another), and the first loss of an outage is
    /// logged.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        do {
            let conn = try connection ?? PostgresConnection(conninfo: conninfo)
            connection = conn
            let value = try body(conn)
            contact?.databaseAnswered()
            if let since = outageSince {
                Log.info("database is back", [("outage_seconds", String(Int(Date().timeIntervalSince(since))))])
                outageSince = nil
            }
            return value
        } catch let error as PostgresError where error.connectionLost {
            connection = nil
            contact?.databaseLost(error.message)
            if outageSince == nil {
                outageSince = Date()
                Log.warning("database unreachable, retrying", [("target", ConnectionTarget.describe(conninfo)), ("error", error.message)])
            }
            throw error
        }
    }

    /// Opens the connection if none is open (a failure is left for the next statement).
    func connectAhead() {
        lock.lock()
        defer { lock.unlock() }
        if connection == nil { connection = try? PostgresConnection(conninfo: conninfo) }
    }
}
