import HaulPostgres
import Synchronization

/// A few database connections shared by the server's request threads: a request borrows one,
/// opening it if none is idle, and gives it back; a connection that failed is dropped.
public final class ConnectionPool: Sendable {
    private let conninfo: String
    private let idle = Mutex<[Idle]>([])
    /// Idle connections kept; more are closed when given back.
    private let keep: Int

    /// An idle connection: only the thread that takes it out of the pool uses it.
    private struct Idle: @unchecked Sendable {
        let connection: PostgresConnection
    }

    /// Connects lazily with `conninfo`, keeping at most `keep` idle connections.
    public init(conninfo: String, keep: Int) {
        self.conninfo = conninfo
        self.keep = keep
    }

    /// Runs `body` with a connection of its own.
    public func with<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try idle.withLock { $0.popLast() }?.connection ?? PostgresConnection(conninfo: conninfo)
        let result: T
        do {
            result = try body(connection)
        } catch let error as PostgresError {
            // The connection may be broken or inside an aborted transaction: it is not given back.
            throw error
        }
        let returned = Idle(connection: connection)
        idle.withLock { connections in
            if connections.count < keep { connections.append(returned) }
        }
        return result
    }
}
