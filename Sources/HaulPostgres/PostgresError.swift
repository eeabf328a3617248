import HaulCore

/// A failure reported by libpq or by the server, with the server's SQLSTATE when there is one.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The five-character SQLSTATE (`40001`, `23505`…), or `nil` for client-side failures.
    public var sqlState: String?
    /// The server's or libpq's message, first line only.
    public var message: String
    /// Whether the connection itself is broken, so the statement may succeed after a reconnect.
    public var connectionLost: Bool

    /// Creates an error from its parts.
    public init(sqlState: String?, message: String, connectionLost: Bool) {
        self.sqlState = sqlState
        self.message = message
        self.connectionLost = connectionLost
    }

    /// `message (SQLSTATE xxxxx)` when the state is known.
    public var description: String {
        guard let sqlState else { return message }
        return "\(message) (SQLSTATE \(sqlState))"
    }

    /// Whether the server refused the statement because of a unique constraint.
    public var isUniqueViolation: Bool { sqlState == "23505" }
}

extension PostgresError {
    /// The user-facing error for a database that cannot be reached, naming where it was tried.
    public func unreachable(target: String) -> HaulError {
        HaulError(
            "database-unreachable",
            "cannot reach PostgreSQL at \(target): \(message)",
            hint:
                "check that the server is running, or set DATABASE_URL (or the PG* variables) to one that is; unset DATABASE_URL to use the embedded database",
            transient: true)
    }
}
