import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Synchronization
import Testing

/// Transfers do not reference their batch's row (migration 0018); pruning empty batches must
/// still never remove one that a manifest is being enqueued into.
@Suite("batches and pruning")
struct BatchRetentionTests {
    /// How a prune on another thread ended.
    final class Outcome: Sendable {
        let value = Mutex<Result<Int, any Error>?>(nil)
    }

    @Test("a prune that runs while a manifest fills an empty batch waits for it and keeps the batch")
    func pruneKeepsABatchBeingFilled() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        _ = try conn.query("INSERT INTO batches (name) VALUES ('nightly')")
        let pruned = Outcome()
        let url = database.url
        try conn.transaction {
            // What `enqueue --manifest` does first: create or lock the batch's row, then insert.
            let batch = try conn.query(
                "INSERT INTO batches (name) VALUES ('nightly') ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id"
            ).first!.int64("id")
            _ = try conn.query(
                "INSERT INTO transfers (url, host, dest, segment_size, batch_id) VALUES ('http://h.test/a', 'h.test', 'a', 4194304, $1)", [batch])
            Thread {
                let result = Result { try Retention.prune(try PostgresConnection(conninfo: url), olderThan: 0) }
                pruned.value.withLock { $0 = result }
            }.start()
            #expect(
                try Harness.waitUntil(timeout: 20) {
                    try database.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'LOCK TABLE batches%'") == "1"
                }, "the prune waits for the enqueue")
        }
        #expect(Harness.waitUntil(timeout: 20) { pruned.value.withLock { $0 != nil } })
        #expect(try pruned.value.withLock { try $0?.get() } == 0)
        #expect(try database.scalar("SELECT count(*) FROM batches b JOIN transfers t ON t.batch_id = b.id WHERE b.name = 'nightly'") == "1")

        // Once its transfers are gone, the batch goes with the next prune.
        _ = try conn.query("UPDATE transfers SET state = 'done', finished_at = now() - interval '1 hour'")
        #expect(try Retention.prune(conn, olderThan: 60) == 1)
        #expect(try database.scalar("SELECT count(*) FROM batches") == "0")
    }

    @Test("an entry given twice goes in once, into a new batch or an existing one, and entries already there stay as they were")
    func repeatedEntriesGoInOnce() throws {
        let database = try TestDatabase()
        let batches = Batches(try PostgresConnection(conninfo: database.url))
        func entry(_ name: String, dest: String? = nil, priority: Int = 0) -> NewTransfer {
            var entry = NewTransfer(url: "http://h.test/\(name)", dest: dest ?? name)
            entry.priority = priority
            return entry
        }

        // A new batch: its rows are loaded with COPY, which checks nothing, so the repeats are dropped before it.
        let first = try batches.enqueue([entry("a"), entry("b"), entry("a", priority: 5), entry("a", dest: "a2")], batch: "mirror")
        #expect(first.inserted == 3)
        #expect(
            try database.scalar("SELECT string_agg(dest || ':' || priority, ',' ORDER BY id) FROM transfers") == "a:0,b:0,a2:0", "the first of each is kept")

        // The same batch again: what it holds is skipped, the new entry goes in once.
        let second = try batches.enqueue([entry("b", priority: 7), entry("c"), entry("c")], batch: "mirror")
        #expect(second.inserted == 1 && second.batchID == first.batchID)
        #expect(try database.scalar("SELECT string_agg(dest || ':' || priority, ',' ORDER BY id) FROM transfers") == "a:0,b:0,a2:0,c:0")
    }

    /// `haul status --batch` and `haul wait --batch`: a batch whose failures are retried the
    /// next day showed its bytes spread over the whole day between.
    @Test("a batch's rate is over the time its transfers ran, not the hours between its night and the retry of its failures")
    func rateOverBusyTime() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let batches = Batches(conn)
        _ = try batches.enqueue(["a", "b", "c"].map { (name: String) in NewTransfer(url: "http://h.test/\(name)", dest: name) }, batch: "nightly")
        // a and b fetched 100 MiB each in the first hour, a day ago (b in its second half); c
        // failed then and, retried 10 s ago, has 20 MiB.
        try conn.query(
            """
            UPDATE transfers SET size = 104857600,
                   state = CASE WHEN dest = 'c' THEN 'downloading' ELSE 'done' END,
                   started_at = now() - CASE dest WHEN 'a' THEN interval '24 hours' WHEN 'b' THEN interval '23 hours 30 minutes' ELSE interval '10 s' END,
                   finished_at = CASE WHEN dest <> 'c' THEN now() - interval '23 hours' END
            """)
        try conn.query(
            """
            INSERT INTO segments (transfer_id, idx, generation, host, byte_offset, length, bytes_done, state)
            SELECT id, 0, 0, 'h.test', 0, 104857600, 20971520, 'running' FROM transfers WHERE dest = 'c'
            """)
        let summary = try #require(try batches.summary("nightly"))
        #expect(summary.bytesDone == 220 << 20)
        let rate = try #require(summary.rate)
        let expected = Double(220 << 20) / 3610
        #expect(abs(rate - expected) < expected / 20, "\(rate) B/s, not 220 MiB over the hour and 10 s the batch ran")
    }
}
