import Foundation
import HaulCore
import HaulPostgres
import HaulQueue

/// The database a command talks to: `DATABASE_URL`, else the `PG*` variables, else the
/// embedded server under `HAUL_HOME`, which is started for the command and stopped after it.
final class DatabaseSession {
    /// The conninfo every connection of this command uses.
    let conninfo: String
    /// The command's own connection.
    let connection: PostgresConnection
    private let embedded: EmbeddedServer?

    /// Connects (starting the embedded server if needed) and checks the schema.
    /// - Parameter migrating: `haul migrate` itself, which must not require a current schema.
    init(migrating: Bool = false) throws {
        let environment = ProcessInfo.processInfo.environment
        _ = try PreparedStatements.from(environment)
        var source = "DATABASE_URL"
        if let url = environment["DATABASE_URL"], !url.isEmpty {
            conninfo = url
            embedded = nil
        } else if ["PGHOST", "PGDATABASE", "PGSERVICE", "PGHOSTADDR"].contains(where: { environment[$0] != nil }) {
            conninfo = ""
            embedded = nil
            let named = ["PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE"].filter { environment[$0] != nil }
            source = "the PG* variables (\(named.joined(separator: ", ")))"
        } else {
            let home = environment["HAUL_HOME"] ?? (NSHomeDirectory() + "/.local/share/haul")
            let server = try EmbeddedServer(home: home)
            conninfo = server.conninfo
            embedded = server
        }
        do {
            connection = try PostgresConnection(conninfo: conninfo)
        } catch let error as PostgresError {
            embedded?.stop()
            throw embedded == nil
                ? error.connectFailure(target: ConnectionTarget.describe(conninfo), source: source)
                : error.unreachable(target: ConnectionTarget.describe(conninfo), source: "the embedded server under HAUL_HOME")
        }
        if embedded != nil {
            try Migrations.apply(on: connection)
        } else if !migrating {
            try Migrations.requireCurrent(on: connection)
        }
    }

    /// Releases the embedded server when no other `haul` process is connected to it (this
    /// process's own connections, a worker's included, do not count): it stops after the
    /// linger (`HAUL_EMBEDDED_LINGER`).
    func close() {
        guard let embedded else { return }
        // When the count cannot be read (the server is going away), releasing is the safe choice:
        // another command that still needs the server marks it in use and starts it again.
        let others = (try? ClientSessions.othersConnected(connection)) ?? 0
        if others == 0 { embedded.release() }
    }
}
