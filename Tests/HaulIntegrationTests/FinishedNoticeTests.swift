import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Testing

/// `haul wait` listens on `TransferStore.finishedChannel` instead of polling often: every common
/// way to a final state notifies it, at its commit.
@Suite("finished transfers are announced")
struct FinishedNoticeTests {
    /// Whether `listener` receives the finished notice within `timeout` seconds.
    private func noticed(_ listener: PostgresConnection, timeout: Double = 20) throws -> Bool {
        try listener.waitForNotifications(timeout: timeout).contains(TransferStore.finishedChannel)
    }

    @Test("a batch recorded done, a transfer failed and transfers canceled each notify; so does a notice that came during a statement")
    func finalStatesNotify() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let listener = try PostgresConnection(conninfo: database.url)
        try listener.listen(TransferStore.finishedChannel)
        let host = "notice.test"
        let store = TransferStore(conn)
        let ids = try (0..<4).map { try store.enqueue(NewTransfer(url: "http://\(host)/f-\($0)", dest: "f-\($0)", segmentSize: 4 << 20)) }
        let leases = TransferLeases(conn, workerID: "worker-a")

        // A probe batch records two files done.
        let claims = try leases.claimPlanning(lease: 30, limit: 2, connections: 2).claims
        let files = claims.map { TransferLeases.ProbedFile.oneByte($0, host: host) }
        #expect(try leases.finish(probed: files).count == 2)
        #expect(try noticed(listener))

        // A failure, and the notice arriving while the listener runs a statement of its own.
        try leases.failTransfer(ids[2], code: .http, message: "gone")
        _ = try listener.query("SELECT 1")
        #expect(try noticed(listener, timeout: 0), "a notice held by libpq is returned without waiting")

        // An operator's cancel.
        let outcome = try store.apply(.cancel, to: [ids[3]])
        #expect(outcome.changed == [ids[3]])
        #expect(try noticed(listener))
    }
}
