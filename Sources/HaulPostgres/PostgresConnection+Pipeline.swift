import CLibPQ
import HaulCore

/// One statement for `PostgresConnection.pipelined`.
public struct PipelinedStatement {
    /// The SQL, with `$1`, `$2`… parameters.
    public let sql: String
    public let parameters: [any PostgresBindable]
    /// `false` commits without waiting for the server's WAL flush (see `transaction(awaitDurableCommit:)`).
    public let awaitDurableCommit: Bool
    /// Runs it as a named prepared statement, planned once per connection instead of at every
    /// call, when the connection allows (see `pipelined`). Only for SQL built from constants,
    /// since each distinct text is kept prepared for the connection's life.
    public let prepared: Bool
    /// A `prepared` statement runs its generic plan, made once per connection, instead of being
    /// planned again for each run's parameters (PostgreSQL plans a prepared statement afresh for
    /// its first five runs, and a worker's connection may not live for many more). Only for a
    /// statement whose best plan does not depend on its parameters' values.
    public let genericPlan: Bool

    /// Creates a statement.
    public init(_ sql: String, _ parameters: [any PostgresBindable] = [], awaitDurableCommit: Bool, prepared: Bool = false, genericPlan: Bool = false) {
        self.sql = sql
        self.parameters = parameters
        self.awaitDurableCommit = awaitDurableCommit
        self.prepared = prepared
        self.genericPlan = genericPlan
    }
}

extension PostgresConnection {
    /// Runs statements one after the other, each as a transaction of its own, in one round trip
    /// (libpq pipeline mode, a sync after each): a statement's snapshot is taken after the
    /// statements before it committed. A failing statement does not stop the ones after it;
    /// once all have run, the first failure is thrown. Inside `transaction` they are ordinary
    /// `query` calls in the open transaction.
    ///
    /// A `prepared` statement is prepared in the same round trip as its first run, under a
    /// name derived from its text, except behind a pooler (`throughPooler`) unless
    /// `HAUL_PREPARED_STATEMENTS` is `always`. Should a later run reach a server session
    /// without it (or one that has it already), that statement did not run, so it runs again
    /// unprepared, and this connection prepares nothing more.
    /// - Returns: one result per statement, in order.
    public func pipelined(_ statements: [PipelinedStatement]) throws -> [PostgresResult] {
        if transactionDepth > 0 { return try statements.map { try query($0.sql, $0.parameters) } }
        var results: [PostgresResult] = []
        var firstError: (any Error)?
        for (statement, outcome) in zip(statements, try send(statements)) {
            do {
                do {
                    results.append(try outcome.get())
                } catch let error as PostgresError where statement.prepared && error.isPreparedStatementMismatch {
                    usesPreparedStatements = false
                    results.append(try send([statement])[0].get())
                }
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
        return results
    }

    /// Sends every statement with a sync after each, then reads each one's outcome.
    private func send(_ statements: [PipelinedStatement]) throws -> [Result<PostgresResult, any Error>] {
        if handle == nil || PQstatus(handle) != CONNECTION_OK {
            try connect()
        }
        guard PQenterPipelineMode(handle) == 1 else { throw lostConnectionError() }
        defer { PQexitPipelineMode(handle) }
        var expected: [Int] = []  // results before each sync: set_config, PREPARE, the statement
        var preparing: [String?] = []
        for statement in statements {
            let texts = statement.parameters.map(\.postgresText)
            var sent = true
            var count = 1
            let usesPrepared = statement.prepared && usesPreparedStatements
            // Settings for this statement's transaction only (the sync after it ends that transaction).
            let settings =
                (statement.awaitDurableCommit ? [] : ["set_config('synchronous_commit', 'off', true)"])
                + (usesPrepared && statement.genericPlan ? ["set_config('plan_cache_mode', 'force_generic_plan', true)"] : [])
            if !settings.isEmpty {
                sent = PQsendQueryParams(handle, "SELECT " + settings.joined(separator: ", "), 0, nil, nil, nil, nil, 0) == 1
                count += 1
            }
            var prepares: String?
            if usesPrepared {
                let name = Self.preparedName(statement.sql)
                if !preparedNames.contains(name) {
                    sent = sent && PQsendPrepare(handle, name, statement.sql, Int32(texts.count), nil) == 1
                    preparedNames.insert(name)
                    prepares = name
                    count += 1
                }
                sent = sent && withOptionalCStrings(texts) { PQsendQueryPrepared(handle, name, Int32(texts.count), $0, nil, nil, 0) } == 1
            } else {
                sent = sent && withOptionalCStrings(texts) { PQsendQueryParams(handle, statement.sql, Int32(texts.count), nil, $0, nil, nil, 0) } == 1
            }
            guard sent, PQpipelineSync(handle) == 1 else { throw lostConnectionError() }
            expected.append(count)
            preparing.append(prepares)
        }
        var batches: [[OpaquePointer]] = []
        var current: [OpaquePointer] = []
        var separators = 0  // libpq returns NULL after each statement's results; two in a row: nothing more comes
        while batches.count < statements.count, separators < 2 {
            guard let result = PQgetResult(handle) else {
                separators += 1
                continue
            }
            separators = 0
            if PQresultStatus(result) == PGRES_PIPELINE_SYNC {
                PQclear(result)
                batches.append(current)
                current = []
                continue
            }
            current.append(result)
        }
        current.forEach { PQclear($0) }
        return statements.indices.map { index in
            // Every result is consumed (and so cleared), also after a failure.
            let batch = index < batches.count ? batches[index] : []
            var last: Result<PostgresResult, any Error>?
            for result in batch {
                do {
                    let value = try consume(result)
                    if case .failure = last {} else { last = .success(value) }
                } catch {
                    if case .failure = last {} else { last = .failure(error) }
                }
            }
            if case .failure = last, let name = preparing[index] { preparedNames.remove(name) }
            guard let last, batch.count == expected[index] else { return .failure(lostConnectionError()) }
            return last
        }
    }

    /// `haul_` and a 64-bit FNV-1a hash of the text: the same text gets the same name in every
    /// process, so a name another session prepared already (behind a pooler) means the same SQL.
    static func preparedName(_ sql: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sql.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "haul_" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension PostgresError {
    /// The named prepared statement was missing (26000) or its name was taken (42P05): the
    /// session is not the one that prepared it, as behind a pooler in transaction mode.
    var isPreparedStatementMismatch: Bool { sqlState == "26000" || sqlState == "42P05" }
}
