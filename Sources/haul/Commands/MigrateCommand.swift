import HaulQueue

enum MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "create or update the database schema (idempotent, safe from many hosts at once)"
    static let help = """
        usage: haul migrate

        Applies the schema migrations this haul carries that the database lacks, under an
        advisory lock so that hosts migrating at the same moment take turns. Running it
        again changes nothing. Uses DATABASE_URL (a postgresql:// URL or libpq conninfo)
        or the PG* variables; with neither, the embedded database under HAUL_HOME.
        """

    static func run(_ words: [String]) throws -> Int32 {
        _ = try Arguments(words, options: [], flags: []).expect(0, "")
        let session = try DatabaseSession(migrating: true)
        defer { session.close() }
        let applied = try Migrations.apply(on: session.connection)
        Output.line(applied.isEmpty ? "schema is up to date (version \(Migrations.all.last?.version ?? 0))" : "applied: \(applied.joined(separator: ", "))")
        return ExitCode.success
    }
}
