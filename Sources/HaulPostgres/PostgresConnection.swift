import CLibPQ
import Foundation
import HaulCore

/// One libpq connection. Blocking: use it from one dedicated thread at a time, never from
/// the Swift concurrency pool. Not `Sendable`; the `PGconn *` belongs to whoever holds this.
///
/// A broken connection is reopened on the next statement; a statement that fails because the
/// connection broke throws a `PostgresError` with `connectionLost` set, and the caller decides
/// whether to retry (statements are not retried here, since not all are idempotent).
public final class PostgresConnection {
    /// What was used to connect: a `postgresql://` URL or a libpq conninfo string (empty: `PG*` variables).
    public let conninfo: String
    var handle: OpaquePointer?
    var transactionDepth = 0
    /// Names of the statements prepared on this session (see `pipelined`); emptied on reconnect.
    var preparedNames: Set<String> = []
    /// Turned off for good once a pooler showed that this connection's sessions change under
    /// it, or at connect when `preparedStatements` says not to prepare behind the pooler found.
    var usesPreparedStatements = true
    /// When `prepared` statements are prepared (`HAUL_PREPARED_STATEMENTS`).
    let preparedStatements: PreparedStatements
    /// Whether a pooler (PgBouncer, say) stands between this connection and the server: the
    /// server session running its statements is not the one whose process id the connection
    /// was given at startup (a pooler gives its clients keys of its own). Found at each connect.
    /// Behind a pooler in transaction mode a session's state (`LISTEN`, prepared statements)
    /// stays with a server session other clients then use, so callers keep none.
    public private(set) var throughPooler = false

    /// Connects now, so that a wrong address is reported at once.
    public init(conninfo: String, preparedStatements: PreparedStatements = .current) throws {
        self.conninfo = conninfo
        self.preparedStatements = preparedStatements
        try connect()
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Where this connection points, for messages: `host:port/db` without credentials.
    public var target: String { ConnectionTarget.describe(conninfo) }

    /// `haul/<pid>`: what `pg_stat_activity` shows for every connection of this process.
    public static let applicationName = "haul/\(getpid())"

    func connect() throws {
        if let handle { PQfinish(handle) }
        handle = nil
        preparedNames = []
        // Keep TCP keepalives short so a vanished server is noticed within seconds, not hours.
        let params = [
            ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
            ("connect_timeout", "10"), ("application_name", Self.applicationName),
        ]
        let keys = ["dbname"] + params.map(\.0)
        let values = [conninfo] + params.map(\.1)
        let conn = withCStrings(keys) { keyPointers in
            withCStrings(values) { valuePointers in
                PQconnectdbParams(keyPointers, valuePointers, 1)
            }
        }
        guard let conn, PQstatus(conn) == CONNECTION_OK else {
            let message = conn.map { Self.firstLine(PQerrorMessage($0)) } ?? "out of memory"
            if let conn { PQfinish(conn) }
            throw PostgresError(sqlState: nil, message: message, connectionLost: true)
        }
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        handle = conn
        try applySessionSettings()
        try findPooler()
        if !preparedStatements.prepares(throughPooler: throughPooler) { usesPreparedStatements = false }
    }

    /// Sets `throughPooler`: whether the server session's process id differs from the one the
    /// connection was given at startup. PgBouncer, Odyssey and PgCat give their own.
    private func findPooler() throws {
        let result = PQexec(handle, "SELECT pg_backend_pid()")
        defer { PQclear(result) }
        guard PQstatus(handle) == CONNECTION_OK else { throw lostConnectionError() }
        guard PQresultStatus(result) == PGRES_TUPLES_OK, PQntuples(result) == 1, let value = PQgetvalue(result, 0, 0) else { return }
        throughPooler = Int32(String(cString: value)) != PQbackendPID(handle)
    }

    /// The settings every Haul session runs with (`SET`s rather than an `options` startup
    /// parameter, which PgBouncer refuses; a server that does not know one keeps its default):
    ///
    /// - `jit = off`: Haul's statements are index lookups and small aggregates. JIT pays off
    ///   for queries that run for seconds, and a batch's summary, whose row estimate crossed
    ///   `jit_above_cost`, spent 20 ms compiling to run for 2 (PostgreSQL 11 and later).
    /// - `idle_in_transaction_session_timeout`: Haul's transactions last milliseconds, but a
    ///   process frozen inside one (Ctrl-Z, `SIGSTOP`, a paused VM or container) would keep its
    ///   row locks for as long as it stays frozen, and every worker claiming from that origin,
    ///   or an operator's `cancel`, would wait behind it. The server ends such a session after
    ///   `idleTransactionTimeout`, twice the default lease, so the locks go with it; the process,
    ///   thawed, finds its connection lost and reconnects (PostgreSQL 9.6 and later).
    private func applySessionSettings() throws {
        for setting in ["jit = off", "idle_in_transaction_session_timeout = '\(Self.idleTransactionTimeout)'"] {
            PQclear(PQexec(handle, "SET " + setting))
            guard PQstatus(handle) == CONNECTION_OK else { throw lostConnectionError() }
        }
    }

    /// How long the server lets a Haul session sit idle inside a transaction before it ends it.
    public static let idleTransactionTimeout = "60s"

    /// Runs one statement with `$1`, `$2`… parameters and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresBindable] = []) throws -> PostgresResult {
        if handle == nil || PQstatus(handle) != CONNECTION_OK {
            try connect()
        }
        let texts = parameters.map(\.postgresText)
        let result = withOptionalCStrings(texts) { pointers in
            PQexecParams(handle, sql, Int32(texts.count), nil, pointers, nil, nil, 0)
        }
        return try consume(result)
    }

    /// Runs several `;`-separated statements without parameters (a migration file).
    public func execute(script: String) throws {
        if handle == nil || PQstatus(handle) != CONNECTION_OK {
            try connect()
        }
        _ = try consume(PQexec(handle, script))
    }

    /// Runs `body` inside `BEGIN … COMMIT`, rolling back if it throws.
    /// A transaction inside another joins the outer one.
    /// - Parameter awaitDurableCommit: `false` commits without waiting for the server's WAL
    ///   flush (`synchronous_commit = off` for this transaction only). Use it only for writes a
    ///   server crash may lose harmlessly: claims, checkpoints and completions are fenced by
    ///   their lease, so a lost one costs a refetch, never a wrong byte.
    public func transaction<T>(awaitDurableCommit: Bool = true, _ body: () throws -> T) throws -> T {
        if transactionDepth > 0 {
            transactionDepth += 1
            defer { transactionDepth -= 1 }
            return try body()
        }
        if awaitDurableCommit {
            try query("BEGIN")
        } else {
            try execute(script: "BEGIN; SET LOCAL synchronous_commit TO off")
        }
        transactionDepth = 1
        defer { transactionDepth = 0 }
        do {
            let value = try body()
            try query("COMMIT")
            return value
        } catch {
            // The original error is what the caller must see; a failed ROLLBACK means the
            // connection is gone, and the server ends the transaction with it.
            _ = try? query("ROLLBACK")
            throw error
        }
    }

    /// Runs one statement as a transaction of its own that commits without waiting for the
    /// server's WAL flush, in one round trip: `set_config('synchronous_commit', 'off', true)`
    /// and the statement are pipelined in one implicit transaction (libpq pipeline mode).
    /// Inside `transaction` it is an ordinary `query`. The same rule as for
    /// `transaction(awaitDurableCommit: false)` applies: only for writes a crash may lose harmlessly.
    @discardableResult
    public func queryWithoutDurableCommit(_ sql: String, _ parameters: [any PostgresBindable] = []) throws -> PostgresResult {
        try pipelined([PipelinedStatement(sql, parameters, awaitDurableCommit: false)])[0]
    }

    func lostConnectionError() -> PostgresError {
        PostgresError(sqlState: nil, message: Self.firstLine(PQerrorMessage(handle)), connectionLost: PQstatus(handle) != CONNECTION_OK)
    }

    func consume(_ result: OpaquePointer?) throws -> PostgresResult {
        guard let result else {
            throw PostgresError(sqlState: nil, message: Self.firstLine(PQerrorMessage(handle)), connectionLost: PQstatus(handle) != CONNECTION_OK)
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(result)
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = Self.firstLine(PQresultErrorMessage(result))
            throw PostgresError(sqlState: state, message: message, connectionLost: PQstatus(handle) != CONNECTION_OK)
        }
    }

    /// Subscribes this connection to `channel` (`LISTEN`). The connection may still run
    /// statements: what arrives meanwhile waits for the next `waitForNotifications`.
    public func listen(_ channel: String) throws {
        try query("LISTEN \(channel)")
    }

    /// Waits up to `timeout` seconds for a notification on a listening connection, or until
    /// `wake` (a descriptor the caller owns, e.g. a stop pipe; -1 for none) is readable.
    /// Notifications that arrived while the connection ran statements are returned at once.
    /// - Returns: the channels notified (empty on timeout or wake).
    public func waitForNotifications(timeout: Double, orUntilReadable wake: Int32 = -1) throws -> [String] {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(sqlState: nil, message: "listening connection closed", connectionLost: true)
        }
        let arrived = Self.takeNotifications(handle)
        guard arrived.isEmpty else { return arrived }
        // A negative descriptor is ignored by poll(2).
        var fds = [pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 2, Int32(timeout * 1000))
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(sqlState: nil, message: Self.firstLine(PQerrorMessage(handle)), connectionLost: true)
        }
        return Self.takeNotifications(handle)
    }

    /// The channels of the notifications libpq holds for `handle`, which it forgets.
    private static func takeNotifications(_ handle: OpaquePointer) -> [String] {
        var channels: [String] = []
        while let notify = PQnotifies(handle) {
            channels.append(String(cString: notify.pointee.relname))
            PQfreemem(notify)
        }
        return channels
    }

    static func firstLine(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown error" }
        let message = String(cString: text).trimmingWhitespace()
        let line = message.split(separator: "\n").first.map(String.init) ?? message
        return line.hasPrefix("ERROR:  ") ? String(line.dropFirst(8)) : line
    }
}

/// The rows of a successful statement, copied out of libpq's result.
public struct PostgresResult: Sendable {
    /// The rows, in the order the server sent them.
    public let rows: [PostgresRow]
    /// How many rows an `INSERT`/`UPDATE`/`DELETE` touched (0 for other statements).
    public let affectedRows: Int

    init(_ result: OpaquePointer) {
        let fieldCount = PQnfields(result)
        var columns: [String: Int] = [:]
        for field in 0..<fieldCount {
            columns[String(cString: PQfname(result, field))] = Int(field)
        }
        rows = (0..<PQntuples(result)).map { row in
            let values = (0..<fieldCount).map { field -> String? in
                PQgetisnull(result, row, field) == 1 ? nil : String(cString: PQgetvalue(result, row, field))
            }
            return PostgresRow(columns: columns, values: values)
        }
        affectedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// The first row, if any.
    public var first: PostgresRow? { rows.first }
}

private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    withOptionalCStrings(strings.map(Optional.some)) { pointers in
        body(pointers + [nil])
    }
}

func withOptionalCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { $0.map { strdup($0) } ?? nil }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) })
}
