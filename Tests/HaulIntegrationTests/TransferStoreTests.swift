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

    @Test("a get's list is recorded in one insert, ids in the list's order, and its unfinished earlier gets are found in one query")
    func getListInOrder() throws {
        let database = try TestDatabase()
        let store = TransferStore(try PostgresConnection(conninfo: database.url))
        // Origins and names in no sorted order, some named by the origin (no dest).
        let requests = (0..<300).map { index in
            var request = NewTransfer(url: "http://host-\(index % 7).test/\(String(index * 7919 % 300))", dest: index % 3 == 0 ? nil : "f-\(300 - index)")
            request.owner = "get-1"
            request.options.localTarget = "/data/" + (request.dest ?? "")
            return request
        }
        let ids = try store.enqueueOwned(requests)
        let rows = try store.statuses(ids)
        #expect(rows.map(\.url) == requests.map(\.url))
        #expect(rows.map(\.dest) == requests.map(\.dest))
        try store.apply(.cancel, to: ids[1])
        let wanted = [
            (requests[0].url, "/data/"), (requests[1].url, "/data/" + requests[1].dest!), (requests[2].url, "/elsewhere/"),
            (requests[5].url, "/data/" + requests[5].dest!),
        ]
        #expect(try store.unfinishedGets(wanted) == [ids[0], nil, nil, ids[5]])
    }

    /// Where the storage keeps no marks (NFSv3), a re-mirror asks the history whether Haul
    /// published the file at each explicit `--dest`, by destination alone: through an index, not by
    /// reading every done transfer (`pg_stat_xact_user_tables` counts this transaction's scans).
    @Test("whether Haul published a destination is read through an index, not by reading every done transfer")
    func publishedDestinationIndexed() throws {
        let database = try TestDatabase()
        _ = try database.scalar(
            """
            INSERT INTO transfers (url, host, dest, segment_size, state)
            SELECT 'http://mirror.example/f' || i, 'mirror.example', 'f' || i, 8388608, 'done' FROM generate_series(1, 20000) i;
            ANALYZE transfers
            """)
        let connection = try PostgresConnection(conninfo: database.url)
        _ = try TransferStore(connection).enqueue(NewTransfer(url: "http://mirror.example/renamed", dest: "f77", segmentSize: 4 << 20))
        let leases = TransferLeases(connection, workerID: "lookup-test")
        let claim = try #require(try leases.claimPlanning(lease: 30, limit: 1, connections: 1).claims.first)
        try connection.query("BEGIN")
        #expect(try leases.destWrittenBefore("f77", of: claim), "another URL's done transfer wrote f77")
        #expect(try !leases.destWrittenBefore("mine.txt", of: claim))
        let scans = try connection.query("SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname = 'transfers'").first?["seq_scan"]
        try connection.query("ROLLBACK")
        #expect(scans == "0", "the table was read whole \(scans ?? "?") times")
    }

    /// Two downloads of one name share a partial file (`haul get`s of two URLs into one path).
    /// The stopped one's last write is its segments' last checkpoint, and the other's writes are
    /// its segments' too: neither is its row's `updated_at`, which housekeeping moves (the
    /// rescuer finishing a stopped download, seconds later, from any process) and which a
    /// download's checkpoints leave alone.
    @Test("another download wrote a shared partial file since this one stopped: judged by their segments' times, not by row times")
    func partialWrittenByAnother() throws {
        let database = try TestDatabase()
        let connection = try PostgresConnection(conninfo: database.url)
        let store = TransferStore(connection)
        let stopped = try store.enqueue(NewTransfer(url: "http://a.test/x", dest: "a.bin", segmentSize: 4 << 20))
        let other = try store.enqueue(NewTransfer(url: "http://b.test/x", dest: "b.bin", segmentSize: 4 << 20))
        /// Puts both on `x.bin`: `stopped` wrote its last byte 8 s ago and housekeeping moved its
        /// row 2 s ago; `other` was planned `otherPlanned` ago and checkpointed `otherWrote` ago.
        func arrange(otherPlanned: String, otherWrote: String) throws {
            try connection.query("DELETE FROM segments")
            try connection.query(
                """
                UPDATE transfers SET dest = 'x.bin', started_at = now() - interval '10 s',
                       state = CASE WHEN id = $1 THEN 'finalizing' ELSE 'downloading' END,
                       updated_at = now() - CASE WHEN id = $1 THEN interval '2 s' ELSE $3::interval END
                WHERE id = ANY(ARRAY[$1, $2]::bigint[])
                """, [stopped, other, otherPlanned])
            try connection.query(
                """
                INSERT INTO segments (transfer_id, idx, generation, host, byte_offset, length, bytes_done, state, updated_at)
                VALUES ($1, 0, 0, 'a.test', 0, 100, 100, 'done', now() - interval '8 s'),
                       ($2, 0, 0, 'b.test', 0, 100, 50, 'queued', now() - $3::interval)
                """, [stopped, other, otherWrote])
        }
        try arrange(otherPlanned: "4 s", otherWrote: "1 s")
        #expect(try store.partialsWrittenByOthers(among: [stopped]) == [stopped], "the other wrote after this one's last write")
        try arrange(otherPlanned: "9.5 s", otherWrote: "9 s")
        #expect(try store.partialsWrittenByOthers(among: [stopped]).isEmpty, "the other's last write came before this one's")
    }

    /// `haul status`' rate and the dashboard's ETA: a transfer retried (or resumed) a day after it
    /// stopped showed its bytes spread over that day. Its rate is its current run's now.
    @Test("a transfer's rate counts its current run: after a retry or a resume, neither the time it sat still nor the bytes fetched before")
    func rateOfTheCurrentRun() throws {
        let database = try TestDatabase()
        let connection = try PostgresConnection(conninfo: database.url)
        let store = TransferStore(connection)
        let mib: Int64 = 1 << 20
        // Two transfers that fetched 60 of 100 MiB in the hour after they started, a day ago:
        // one failed then, the other was paused.
        let failed = try store.enqueue(NewTransfer(url: "http://rate.test/failed", dest: "failed.bin", segmentSize: 4 << 20))
        let paused = try store.enqueue(NewTransfer(url: "http://rate.test/paused", dest: "paused.bin", segmentSize: 4 << 20))
        try connection.query(
            """
            UPDATE transfers SET size = 104857600, started_at = now() - interval '1 day',
                   state = CASE WHEN id = $1 THEN 'failed' ELSE 'paused' END, paused_from = CASE WHEN id = $2 THEN 'downloading' END,
                   error = CASE WHEN id = $1 THEN 'connection refused' END, finished_at = CASE WHEN id = $1 THEN now() - interval '23 hours' END
            WHERE id = ANY(ARRAY[$1, $2]::bigint[])
            """, [failed, paused])
        try connection.query(
            """
            INSERT INTO segments (transfer_id, idx, generation, host, byte_offset, length, bytes_done, state)
            SELECT id, 0, 0, 'rate.test', 0, 104857600, 62914560, CASE WHEN id = $1 THEN 'failed' ELSE 'queued' END
            FROM transfers WHERE id = ANY(ARRAY[$1, $2]::bigint[])
            """, [failed, paused])
        #expect(try store.status(paused)?.rate ?? .infinity < 1024, "before: 60 MiB over a day")
        try store.apply(.retry, to: failed)
        try store.apply(.resume, to: paused)
        // Ten seconds into the new runs, 20 MiB more each.
        try connection.query("UPDATE transfers SET started_at = started_at - interval '10 s' WHERE id = ANY(ARRAY[$1, $2]::bigint[])", [failed, paused])
        try connection.query("UPDATE segments SET bytes_done = bytes_done + 20971520")
        for id in [failed, paused] {
            let status = try #require(try store.status(id))
            #expect(status.state == .downloading)
            #expect(status.bytesDone == 80 * mib)
            let rate = try #require(status.rate)
            #expect(abs(rate - Double(2 * mib)) < Double(mib) / 10, "transfer \(id): \(rate) B/s, not 20 MiB over 10 s")
        }
    }
}
