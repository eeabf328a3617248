import Foundation
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Synchronization
import Testing

/// Query parameters against a real server: what Haul sends is what PostgreSQL reads.
@Suite("query parameters")
struct ParameterTests {
    @Test("array parameters arrive element for element: quotes, backslashes, commas, braces, NULL, empty, non-ASCII")
    func arrays() throws {
        let connection = try PostgresConnection(conninfo: Harness.databaseServer)
        let values: [String?] = ["plain", "", "a,b", "{x}", #"say "hi""#, #"back\slash"#, #"\""#, "NULL", nil, "naïve ✓", " spaced ", "new\nline"]
        let rows = try connection.query("SELECT ord, value FROM unnest($1::text[]) WITH ORDINALITY AS t(value, ord) ORDER BY ord", [values]).rows
        #expect(rows.count == values.count)
        for (row, expected) in zip(rows, values) { #expect(row["value"] == expected) }
        let numbers: [Int64] = [0, -1, 9_223_372_036_854_775_807]
        #expect(try connection.query("SELECT sum(n)::text AS s FROM unnest($1::bigint[]) AS n", [numbers]).first?["s"] == "9223372036854775806")
    }
}

/// `COPY … FROM STDIN` rows against a real server: what Haul loads is what PostgreSQL stores.
@Suite("copied rows")
struct CopyTests {
    @Test("copied fields arrive byte for byte: tabs, newlines, carriage returns, backslashes, \\N as text, NULL, empty, non-ASCII")
    func fields() throws {
        let connection = try PostgresConnection(conninfo: Harness.databaseServer)
        let values: [String?] = [
            "plain", "", "tab\there", "new\nline", "carriage\rreturn", #"back\slash"#, #"\N"#, "NULL", nil, "naïve ✓", #"{"a": "b\"c"}"#, "\\\t",
        ]
        try connection.query("CREATE TEMP TABLE copied (ord int, value text)")
        var rows = CopyRows()
        for (index, value) in values.enumerated() { rows.append([String(index), value]) }
        #expect(rows.count == values.count)
        #expect(try connection.copy(into: "copied (ord, value)", rows) == values.count)
        let stored = try connection.query("SELECT value FROM copied ORDER BY ord").rows
        #expect(stored.map { $0["value"] } == values)
    }

    @Test("a copy the server refuses throws its error, and the connection goes on")
    func refused() throws {
        let connection = try PostgresConnection(conninfo: Harness.databaseServer)
        try connection.query("CREATE TEMP TABLE numbers (n int)")
        var rows = CopyRows()
        rows.append(["1"])
        rows.append(["not a number"])
        #expect(throws: PostgresError.self) { try connection.copy(into: "numbers (n)", rows) }
        #expect(try connection.query("SELECT count(*)::text AS n FROM numbers").first?["n"] == "0")
    }

    @Test("a new batch's entries are stored as given: headers with quotes, backslashes and escapes, checksums, priorities")
    func batchEntries() throws {
        let database = try TestDatabase()
        let manifest = try TemporaryDirectory()
        let path = manifest.path + "/manifest.jsonl"
        let digest = "sha256:" + String(repeating: "0", count: 64)
        try #"""
        {"url": "http://127.0.0.1:9/a", "dest": "a", "headers": {"X-Test": "a\\b\"c\td"}, "checksum": "\#(digest)"}
        {"url": "http://127.0.0.1:9/b", "dest": "naïve ✓", "priority": 5}

        """#.write(toFile: path, atomically: true, encoding: .utf8)
        let enqueued = try Run.haul(["enqueue", "--manifest", path, "--batch", "copied", "--header", #"X-Other: back\slash"#], database: database.url)
        try #require(enqueued.status == 0, "\(enqueued.stderr)")
        let connection = try PostgresConnection(conninfo: database.url)
        let rows = try connection.query("SELECT dest, headers::text AS headers, priority::text AS priority, expected_digest FROM transfers ORDER BY id").rows
        try #require(rows.count == 2)
        #expect(rows[0]["dest"] == "a")
        #expect(rows[0]["headers"] == #"[{"name": "X-Other", "value": "back\\slash"}, {"name": "X-Test", "value": "a\\b\"c\td"}]"#)
        #expect(rows[0]["expected_digest"] == digest)
        #expect(rows[1]["dest"] == "naïve ✓")
        #expect(rows[1]["priority"] == "5")
        #expect(rows[1]["headers"] == #"[{"name": "X-Other", "value": "back\\slash"}]"#)
    }
}

/// `SegmentLeases.splitStraggler` from many workers at once, on a real server.
@Suite("straggler splits")
struct SplitTests {
    static let mib: Int64 = 1 << 20

    /// A transfer enqueued as `name` and moved to `downloading` at `size` bytes, with no segment
    /// rows yet: the database, a connection to it, and the transfer's id.
    static func downloading(_ name: String, size: Int64) throws -> (database: TestDatabase, setup: PostgresConnection, id: Int64) {
        let database = try TestDatabase()
        let enqueued = try Run.haul(["enqueue", "http://127.0.0.1:9/\(name)", "--dest", name, "--json"], database: database.url)
        try #require(enqueued.status == 0, "\(enqueued.stderr)")
        let setup = try PostgresConnection(conninfo: database.url)
        let id = try #require(try setup.query("SELECT id FROM transfers").first?.int64("id"))
        try setup.query("UPDATE transfers SET state = 'downloading', size = $2, accepts_ranges = true, dest = $3 WHERE id = $1", [id, size, name])
        return (database, setup, id)
    }

    @Test("concurrent splits of one transfer's segments never fail, and the segments still cover the file exactly")
    func concurrentSplits() throws {
        let mib = Self.mib
        let size = 8 * 64 * mib
        let (database, setup, id) = try Self.downloading("split.bin", size: size)
        // Eight running segments of 64 MiB with live leases, as if eight slow fetchers had each checkpointed once.
        try setup.query(
            """
            INSERT INTO segments (transfer_id, generation, idx, host, byte_offset, length, state, lease_token, lease_expires_at, worker_id, rate)
            SELECT $1, 0, i, '127.0.0.1:9', i * $2, $2, 'running', gen_random_uuid(), now() + interval '1 hour', 'fetcher', 1048576
            FROM generate_series(0, 7) AS i
            """, [id, 64 * mib])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            do {
                let connection = try PostgresConnection(conninfo: database.url)
                for _ in 0..<6 where try SegmentLeases(connection, workerID: "splitter-\(worker)").splitStraggler(minimumPiece: mib) {
                    // The splitter claims its new piece and checkpoints it (a queued piece stops
                    // further splits of the transfer; one without a recorded rate is not split).
                    try connection.query(
                        """
                        UPDATE segments SET state = 'running', lease_token = gen_random_uuid(), lease_expires_at = now() + interval '1 hour', rate = 1048576
                        WHERE transfer_id = $1 AND state = 'queued'
                        """, [id])
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let rows = try setup.query("SELECT byte_offset, length FROM segments WHERE transfer_id = $1 ORDER BY byte_offset", [id]).rows
        #expect(rows.count > 8, "some segments were split")
        var next: Int64 = 0
        for row in rows {
            #expect(try row.int64("byte_offset") == next, "no gap and no overlap at \(next)")
            next = try row.int64("byte_offset") + (try row.optionalInt64("length") ?? 0)
        }
        #expect(next == size)
    }

    @Test("a transfer with a segment queued to be fetched now is not split: an idle worker claims that one first")
    func queuedSegmentsFirst() throws {
        let mib = Self.mib
        let (_, setup, id) = try Self.downloading("q.bin", size: 3 * 64 * mib)
        // Two segments just started, the third still queued: the moment after a plan was written.
        try setup.query(
            """
            INSERT INTO segments (transfer_id, generation, idx, host, byte_offset, length, state, lease_token, lease_expires_at, worker_id, rate)
            SELECT $1, 0, i, '127.0.0.1:9', i * $2, $2, CASE WHEN i < 2 THEN 'running' ELSE 'queued' END,
                   CASE WHEN i < 2 THEN gen_random_uuid() END, CASE WHEN i < 2 THEN now() + interval '1 hour' END, CASE WHEN i < 2 THEN 'fetcher' END,
                   CASE WHEN i < 2 THEN 1048576 END
            FROM generate_series(0, 2) AS i
            """, [id, 64 * mib])
        let leases = SegmentLeases(setup, workerID: "idle")
        #expect(try !leases.splitStraggler(minimumPiece: mib), "the queued segment is claimed, not a running one cut")
        // Waiting to retry, the queued segment is not work for now: the running ones may be split.
        try setup.query("UPDATE segments SET next_attempt_at = now() + interval '1 hour', attempts = 1 WHERE state = 'queued'")
        #expect(try leases.splitStraggler(minimumPiece: mib))
        #expect(try setup.query("SELECT count(*) AS n FROM segments WHERE transfer_id = $1", [id]).first?.int("n") == 4)
    }

    @Test("an S3 transfer's segments are never split: each is one part, planned within 10 000 parts of at least 5 MiB")
    func s3PartsNotSplit() throws {
        let mib = Self.mib
        let (_, setup, id) = try Self.downloading("s3.bin", size: 2 * 64 * mib)
        try setup.query("UPDATE transfers SET layout = 's3', object_upload_id = 'upload-1' WHERE id = $1", [id])
        try setup.query(
            """
            INSERT INTO segments (transfer_id, generation, idx, host, byte_offset, length, state, lease_token, lease_expires_at, worker_id, rate)
            SELECT $1, 0, i, '127.0.0.1:9', i * $2, $2, 'running', gen_random_uuid(), now() + interval '1 hour', 'fetcher', 1048576
            FROM generate_series(0, 1) AS i
            """, [id, 64 * mib])
        #expect(try !SegmentLeases(setup, workerID: "idle").splitStraggler(minimumPiece: mib))
        #expect(try setup.query("SELECT count(*) AS n FROM segments WHERE transfer_id = $1", [id]).first?.int("n") == 2)
        // The same segments of a POSIX transfer are split.
        try setup.query("UPDATE transfers SET layout = 'inplace', object_upload_id = NULL WHERE id = $1", [id])
        #expect(try SegmentLeases(setup, workerID: "idle").splitStraggler(minimumPiece: mib))
    }

    @Test("a split leaves the running worker every byte it may receive before it learns of the cut")
    func splitLeavesRoom() throws {
        let mib = Self.mib
        let (_, setup, id) = try Self.downloading("room.bin", size: 512 * mib)
        // One segment of the whole file, 64 MiB checkpointed, at 100 MiB/s.
        try setup.query(
            """
            INSERT INTO segments (transfer_id, generation, idx, host, byte_offset, length, bytes_done, state, lease_token, lease_expires_at, worker_id, rate)
            VALUES ($1, 0, 0, '127.0.0.1:9', 0, $2, $3, 'running', gen_random_uuid(), now() + interval '1 hour', 'fetcher', $4)
            """, [id, 512 * mib, 64 * mib, Double(100 * mib)])
        // Room: two checkpoints (32 MiB, less than two seconds' 200), a quarter second while one
        // is recorded (25 MiB) and 1 MiB in the sockets: 58 MiB. Half of the 390 MiB left past
        // it is 195: the cut is at 64 + 58 + 195 = 317 MiB.
        let leases = SegmentLeases(setup, workerID: "idle")
        #expect(try leases.splitStraggler(minimumPiece: mib, headroom: 32 * mib, checkpointInterval: 1, checkpointLatency: 0.25))
        let rows = try setup.query("SELECT byte_offset, length FROM segments WHERE transfer_id = $1 ORDER BY byte_offset", [id]).rows
        #expect(try rows.map { [try $0.int64("byte_offset"), try $0.optionalInt64("length") ?? -1] } == [[0, 317 * mib], [317 * mib, 195 * mib]])
    }

    /// A transfer of one 64 MiB segment, claimed by `fetcher` and checkpointed at 4 MiB, then
    /// cut by an idle worker at 35 MiB (4 + 3 MiB of room + half of the 57 MiB left): the
    /// connection, and the holder's segment as it knows it (64 MiB long).
    static func cutAt35MiB(_ name: String) throws -> (database: TestDatabase, setup: PostgresConnection, id: Int64, held: ClaimedSegment) {
        let mib = Self.mib
        let (database, setup, id) = try Self.downloading(name, size: 64 * mib)
        try setup.query(
            "INSERT INTO segments (transfer_id, generation, idx, host, byte_offset, length) VALUES ($1, 0, 0, '127.0.0.1:9', 0, $2)", [id, 64 * mib])
        let fetcher = SegmentLeases(setup, workerID: "fetcher")
        let held = try #require(try fetcher.claim(limit: 1, lease: 60).first)
        #expect(try fetcher.checkpoint(held, bytesDone: 4 * mib, lease: 60, part: nil) == .recorded)
        #expect(try SegmentLeases(setup, workerID: "idle").splitStraggler(minimumPiece: mib, headroom: 2 * mib, checkpointInterval: 1))
        let rows = try setup.query("SELECT byte_offset, length FROM segments WHERE transfer_id = $1 ORDER BY byte_offset", [id]).rows
        #expect(try rows.map { [try $0.int64("byte_offset"), try $0.optionalInt64("length") ?? -1] } == [[0, 35 * mib], [35 * mib, 29 * mib]])
        return (database, setup, id, held)
    }

    @Test("a holder already past a cut it did not know of takes the cut-off piece back whole: the origin sends no byte twice")
    func pastTheCutTakesThePieceBack() throws {
        let mib = Self.mib
        let (_, setup, id, held) = try Self.cutAt35MiB("back.bin")
        let idle = SegmentLeases(setup, workerID: "idle")
        #expect(try idle.claim(limit: 1, lease: 60).isEmpty, "the piece waits for its holder's word")
        let fetcher = SegmentLeases(setup, workerID: "fetcher")
        #expect(try fetcher.checkpoint(held, bytesDone: 40 * mib, lease: 60, part: nil) == .recorded, "the holder goes on to its end")
        let rows = try setup.query("SELECT byte_offset, length, bytes_done FROM segments WHERE transfer_id = $1", [id]).rows
        #expect(try rows.map { [try $0.int64("byte_offset"), try $0.optionalInt64("length") ?? -1, try $0.int64("bytes_done")] } == [[0, 64 * mib, 40 * mib]])
        // Cut again at 53 MiB; the holder finishes all 64 MiB without a checkpoint between: its
        // completion takes the piece back too, and the transfer is whole.
        #expect(try idle.splitStraggler(minimumPiece: mib, headroom: 2 * mib, checkpointInterval: 1))
        #expect(try fetcher.complete(held, bytesDone: 64 * mib, part: nil) == .transferReady)
        let done = try setup.query("SELECT length, bytes_done, state FROM segments WHERE transfer_id = $1", [id]).rows
        let summary = try done.map { "\(try $0.optionalInt64("length") ?? -1) \(try $0.int64("bytes_done")) \(try $0.string("state"))" }
        #expect(summary == ["\(64 * mib) \(64 * mib) done"])
    }

    @Test("in the parts layout, a holder that takes the cut-off piece back records its whole part file")
    func partsTakeBack() throws {
        let mib = Self.mib
        let (_, setup, id, held) = try Self.cutAt35MiB("parts.bin")
        let part = PartRecord(path: ".haul/parts.bin.part0", offset: 0, length: 64 * mib, replacesEarlierParts: false)
        #expect(try SegmentLeases(setup, workerID: "fetcher").complete(held, bytesDone: 64 * mib, part: part) == .transferReady)
        let parts = try setup.query(
            "SELECT p.length FROM segment_parts p JOIN segments s ON s.id = p.segment_id WHERE s.transfer_id = $1", [id]
        ).rows
        #expect(try parts.map { try $0.int64("length") } == [64 * mib], "the part is recorded whole, not cut at 35 MiB")
    }

    @Test("a holder that knows of the cut lets the piece be claimed at once; a piece already claimed is never taken back")
    func knownCutLetsThePieceGo() throws {
        let mib = Self.mib
        let (_, setup, _, held) = try Self.cutAt35MiB("go.bin")
        let fetcher = SegmentLeases(setup, workerID: "fetcher")
        let idle = SegmentLeases(setup, workerID: "idle")
        // The checkpoint after the cut tells the holder; the one after that says it knows.
        #expect(try fetcher.checkpoint(held, bytesDone: 8 * mib, lease: 60, part: nil) == .shortened(length: 35 * mib))
        #expect(try idle.claim(limit: 1, lease: 60).isEmpty)
        #expect(try fetcher.checkpoint(held.shortened(to: 35 * mib), bytesDone: 12 * mib, lease: 60, part: nil) == .recorded)
        #expect(try idle.claim(limit: 1, lease: 60).first?.offset == 35 * mib)

        // Another transfer: the holder stays silent until the piece's wait ran out and an idle
        // worker claimed it; past the cut by then, the holder stops at the cut.
        let (_, other, otherID, otherHeld) = try Self.cutAt35MiB("late.bin")
        try other.query("UPDATE segments SET next_attempt_at = now() WHERE transfer_id = $1 AND state = 'queued'", [otherID])
        #expect(try SegmentLeases(other, workerID: "idle").claim(limit: 1, lease: 60).first?.offset == 35 * mib)
        #expect(try SegmentLeases(other, workerID: "fetcher").checkpoint(otherHeld, bytesDone: 40 * mib, lease: 60, part: nil) == .shortened(length: 35 * mib))
        #expect(try other.query("SELECT count(*) AS n FROM segments WHERE transfer_id = $1", [otherID]).first?.int("n") == 2)
    }

    @Test("a segment is split only once its checkpoints recorded its rate, and never into pieces its rate fetches in less than the minimum time")
    func splitsNeedARate() throws {
        let mib = Self.mib
        let (_, setup, id) = try Self.downloading("r.bin", size: 64 * mib)
        // One segment that has just started: no checkpoint has recorded its rate yet.
        try setup.query(
            """
            INSERT INTO segments (transfer_id, generation, idx, host, byte_offset, length, state, lease_token, lease_expires_at, worker_id)
            VALUES ($1, 0, 0, '127.0.0.1:9', 0, $2, 'running', gen_random_uuid(), now() + interval '1 hour', 'fetcher')
            """, [id, 64 * mib])
        let leases = SegmentLeases(setup, workerID: "idle")
        #expect(try !leases.splitStraggler(minimumPiece: mib, minimumTime: 0.25), "nobody knows yet whether it straggles")
        // 400 MiB/s: a quarter second is 100 MiB, more than the 64 MiB segment holds.
        try setup.query("UPDATE segments SET rate = $2 WHERE transfer_id = $1", [id, Double(400 * mib)])
        #expect(try !leases.splitStraggler(minimumPiece: mib, minimumTime: 0.25), "a fast segment is left to finish")
        // 4 MiB/s, a straggler: cut.
        try setup.query("UPDATE segments SET rate = $2 WHERE transfer_id = $1", [id, Double(4 * mib)])
        #expect(try leases.splitStraggler(minimumPiece: mib, minimumTime: 0.25))
    }
}
