import Foundation
import HaulPostgres
import HaulTestSupport
import Testing

/// The settings every Haul session runs with, whatever the server's defaults.
@Suite("session settings")
struct SessionSettingsTests {
    @Test("Haul's sessions run without JIT compilation, after a reconnect too")
    func sessionsRunWithoutJIT() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        #expect(try conn.query("SHOW jit").first?["jit"] == "off")
        let pid = try conn.query("SELECT pg_backend_pid() AS pid").first!.string("pid")
        let admin = try PostgresConnection(conninfo: database.url)
        _ = try admin.query("SELECT pg_terminate_backend(\(pid))")
        #expect(throws: PostgresError.self) { try conn.query("SELECT 1") }
        #expect(try conn.query("SHOW jit").first?["jit"] == "off")
    }
}
