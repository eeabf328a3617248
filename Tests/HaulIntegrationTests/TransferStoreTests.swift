import Foundation
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Testing

/// `TransferStore` reads that commands build on, against a real server.
@Suite("transfer store")
struct TransferStoreTests {
    @Test("statuses of many transfers come in one query, in the order asked, leaving out ids with no transfer")
    func statusesInOrder() throws {
        let database = try TestDatabase()
        let store = TransferStore(try PostgresConnection(conninfo: database.url))
        let ids = try (0..<3).map { try store.enqueue(NewTransfer(url: "http://order.test/f-\($0)", dest: "f-\($0)", segmentSize: 4 << 20)) }
        let asked = [ids[2], 999_999, ids[0], ids[1]]
        #expect(try store.statuses(asked).map(\.id) == [ids[2], ids[0], ids[1]])
        #expect(try store.statuses(asked).map(\.dest) == ["f-2", "f-0", "f-1"])
        #expect(try store.statuses([]).isEmpty)
        // `haul wait` names the id that has no transfer.
        let wait = try Run.haul(["wait", String(ids[0]), "999999", "--timeout", "1s"], database: database.url)
        #expect(wait.status != 0)
        #expect(wait.stderr.contains("there is no transfer 999999"), "\(wait.stderr)")
    }
}
