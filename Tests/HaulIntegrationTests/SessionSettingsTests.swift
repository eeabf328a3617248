import Foundation
import HaulPostgres
import HaulTestSupport
import Testing

/// The settings every Haul session runs with, whatever the server's defaults.
@Suite("session settings")
struct SessionSettingsTests {
    @Test("Haul's sessions run without JIT compilation and end when idle in a transaction for a minute, after a reconnect too")
    func sessionSettings() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let settings = {
            try conn.query("SELECT current_setting('jit') AS jit, current_setting('idle_in_transaction_session_timeout') AS idle").first
        }
        #expect(try settings()?["jit"] == "off")
        #expect(try settings()?["idle"] == "1min")
        let pid = try conn.query("SELECT pg_backend_pid() AS pid").first!.string("pid")
        let admin = try PostgresConnection(conninfo: database.url)
        _ = try admin.query("SELECT pg_terminate_backend(\(pid))")
        #expect(throws: PostgresError.self) { try conn.query("SELECT 1") }
        #expect(try settings()?["jit"] == "off")
        #expect(try settings()?["idle"] == "1min")
    }

    @Test("a session the server ended for idling in a transaction (a frozen process) gives up its row lock, and reconnects when it is used again")
    func idleTransactionEnds() throws {
        let database = try TestDatabase()
        let other = try PostgresConnection(conninfo: database.url)
        try other.query("CREATE TABLE held (id int PRIMARY KEY, note text)")
        try other.query("INSERT INTO held VALUES (1, 'old')")
        let frozen = try PostgresConnection(conninfo: database.url)
        // The minute Haul sets, shortened for the test the way an operator could for Haul's role.
        try frozen.query("SET idle_in_transaction_session_timeout = '1s'")
        try frozen.query("BEGIN")
        try frozen.query("UPDATE held SET note = 'frozen' WHERE id = 1")
        try other.query("SET lock_timeout = '20s'")
        try other.query("UPDATE held SET note = 'other' WHERE id = 1")
        #expect(try other.query("SELECT note FROM held").first?["note"] == "other")
        let lost = #expect(throws: PostgresError.self) { try frozen.query("SELECT 1") }
        #expect(lost?.connectionLost == true, "\(String(describing: lost))")
        #expect(try frozen.query("SELECT note FROM held").first?["note"] == "other")
    }
}
