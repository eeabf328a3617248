import HaulPostgres

/// Who else is connected to the database: `haul` names its connections `haul/<pid>`
/// (`PostgresConnection.applicationName`), so another process's are told from this one's.
public enum ClientSessions {
    /// How many connections of other `haul` processes the server has now.
    public static func othersConnected(_ db: PostgresConnection) throws -> Int {
        try db.query(
            Statements.ClientSessions.othersConnected, [PostgresConnection.applicationName]
        ).first?.int("n") ?? 0
    }
}
