import HaulCore
import HaulPostgres

/// One versioned SQL file from the top-level `migrations/` folder, compiled into the binary.
public struct Migration: Sendable {
    /// The number the file name starts with; applied in ascending order.
    public let version: Int
    /// The file name without `.sql`.
    public let name: String
    /// The statements, run in one transaction.
    public let sql: String
}

/// Applies the embedded migrations that a database has not seen yet.
public enum Migrations {
    /// Every migration this binary knows, in version order.
    public static var all: [Migration] { embedded.sorted { $0.version < $1.version } }

    /// Applies what is missing in one transaction under a transaction-scoped advisory lock, so
    /// hosts migrating at once take turns (and the lock cannot leak through a pooler).
    /// - Returns: the names of the migrations applied now (empty when the schema was current).
    @discardableResult
    public static func apply(on connection: PostgresConnection) throws -> [String] {
        try connection.transaction {
            try connection.query("SELECT pg_advisory_xact_lock(7235841)")
            try connection.query(
                Statements.Migrations.createRecord)
            let applied = Set(try connection.query(Statements.Migrations.applied).rows.map { try $0.int("version") })
            var appliedNow: [String] = []
            for migration in all where !applied.contains(migration.version) {
                try connection.execute(script: migration.sql)
                try connection.query(Statements.Migrations.record, [migration.version, migration.name])
                appliedNow.append(migration.name)
            }
            return appliedNow
        }
    }

    /// Throws a clear error when the database lacks migrations this binary needs.
    public static func requireCurrent(on connection: PostgresConnection) throws {
        let latest = all.last?.version ?? 0
        let current: Int
        do {
            current = try connection.query(Statements.Migrations.current).first?.int("v") ?? 0
        } catch let error as PostgresError where error.sqlState == "42P01" {
            current = 0
        }
        guard current >= latest else {
            throw HaulError(.schemaOutdated, "the database schema is at version \(current) but this haul needs \(latest)", hint: "run 'haul migrate' first")
        }
    }
}
