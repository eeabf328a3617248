import HaulPostgres

/// The planning claim's statements as a connection prepared them (`TransferLeases.claimPlanning`:
/// the slot rows' step and the rest of the batch), and their generic plans,
/// for tests of what the claim reads.
enum ClaimPlans {
    /// The claim's statements prepared on `conn`: name, statement, generic_plans, custom_plans.
    static func statements(_ conn: PostgresConnection) throws -> [PostgresRow] {
        try conn.query(
            "SELECT name, statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%UPDATE transfers t SET%lease_token = (SELECT value FROM token)%'"
        ).rows
    }

    /// Whether `statement` is the slot rows' step (else the rest of the batch).
    static func takesSlots(_ statement: PostgresRow) throws -> Bool {
        try statement.string("statement").contains("holds_slot = true")
    }

    /// The generic plan of `statement` for worker `worker-a` claiming on `host` with
    /// `connections` connections (default host limit 8; the rest of the batch: 96 rows).
    /// `analyze` runs it (`EXPLAIN ANALYZE`, in a transaction that commits what it did).
    static func plan(_ conn: PostgresConnection, _ statement: PostgresRow, host: String, connections: Int, analyze: Bool = false) throws -> String {
        let arguments = try takesSlots(statement) ? "30, 'worker-a', \(connections), 8" : "30, 'worker-a', '\(host)', 96, now()"
        let explain = analyze ? "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)" : "EXPLAIN"
        return try conn.transaction {
            _ = try conn.query("SET LOCAL plan_cache_mode = force_generic_plan")
            return try conn.query("\(explain) EXECUTE \(try statement.string("name"))(\(arguments))").rows.compactMap { $0["QUERY PLAN"] }
                .joined(separator: "\n")
        }
    }
}
