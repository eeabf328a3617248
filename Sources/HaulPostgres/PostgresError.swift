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

    /// Whether the statement gave up waiting for a lock after `lock_timeout`.
    public var isLockTimeout: Bool { sqlState == "55P03" }
}

extension PostgresError {
    /// The user-facing error for a failed connection attempt, saying what is wrong: a malformed
    /// URL, a refused login, a missing database, or a server that cannot be reached.
    /// - Parameters:
    ///   - target: where it was tried (`ConnectionTarget.describe`), without a password.
    ///   - source: what chose the target, e.g. `DATABASE_URL` or `the PG* variables (PGHOST, PGPORT)`.
    public func connectFailure(target: String, source: String = "DATABASE_URL") -> HaulError {
        let text = message.lowercased()
        // libpq prefixes the server's answer with where it connected, which the message says already.
        let reason = message.range(of: "FATAL:").map { String(message[$0.upperBound...]).trimmingWhitespace() } ?? message
        let malformed = ["uri", "connection option", "missing \"=\"", "unterminated quoted", "percent-encoded", "invalid integer value"]
        if malformed.contains(where: text.contains) {
            return HaulError(
                .databaseURLMalformed, "\(source) is malformed: \(message)",
                hint: "write it as postgresql://USER:PASSWORD@HOST:PORT/DATABASE or as a libpq conninfo such as 'host=db dbname=haul'")
        }
        if text.contains("authentication failed") || text.contains("no password supplied") || text.contains("no pg_hba.conf entry")
            || (text.contains("role \"") && text.contains("does not exist"))
        {
            return HaulError(
                .databaseLogin, "PostgreSQL at \(target) (from \(source)) refused the login: \(reason)",
                hint: "check the user and password in \(source) (or PGUSER, PGPASSWORD, ~/.pgpass) and the server's pg_hba.conf")
        }
        if text.contains("database \"") && text.contains("does not exist") {
            return HaulError(
                .databaseMissing, "PostgreSQL at \(target) (from \(source)) has no such database: \(reason)",
                hint: "create it (createdb) or name an existing one in \(source)")
        }
        return unreachable(target: target, source: source)
    }

    /// The user-facing error for a database that cannot be reached, naming where it was tried.
    public func unreachable(target: String, source: String = "DATABASE_URL") -> HaulError {
        HaulError(
            .databaseUnreachable,
            "cannot reach PostgreSQL at \(target)\(source == "DATABASE_URL" ? "" : " (from \(source))"): \(message)",
            hint:
                "check that the server is running, or set DATABASE_URL (or the PG* variables) to one that is; unset DATABASE_URL to use the embedded database",
            transient: true)
    }
}
