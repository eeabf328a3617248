import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Synchronization
import Testing

/// The claim / lease / fence protocol driven in-process against the real server, as River's
/// driver tests do: no worker process, no origin, only HaulQueue's functions and the rows.
@Suite("lease protocol")
struct LeaseProtocolTests {
    /// A transfer in `downloading` with `segments` queued segments of 1 MiB, on host `host`.
    static func downloading(_ database: TestDatabase, segments: Int, host: String = "origin.test:8080") throws -> Int64 {
        let enqueued = try Run.haul(["enqueue", "http://\(host)/f.bin", "--dest", "f-\(UUID().uuidString.prefix(8)).bin", "--json"], database: database.url)
        try #require(enqueued.status == 0, "\(enqueued.stderr)")
        let connection = try PostgresConnection(conninfo: database.url)
        let id = try #require(try connection.query("SELECT max(id) AS id FROM transfers").first?.int64("id"))
        try connection.query(
            "UPDATE transfers SET state = 'downloading', size = $2, accepts_ranges = true, dest = coalesce(dest, 'f.bin') WHERE id = $1",
            [id, Int64(segments) << 20])
        try connection.query(
            """
            INSERT INTO segments (transfer_id, generation, idx, host, byte_offset, length)
            SELECT $1, 0, i, $3, i * 1048576, 1048576 FROM generate_series(0, $2 - 1) AS i
            """, [id, segments, host])
        return id
    }

    /// Makes every running lease look expired.
    static func expireLeases(_ connection: PostgresConnection) throws {
        try connection.query("UPDATE segments SET lease_expires_at = now() - interval '1 second' WHERE state = 'running'")
    }

    /// Puts the restarted transfer `id` back to downloading with one segment of its new
    /// generation, and claims that segment.
    static func nextGeneration(_ connection: PostgresConnection, _ id: Int64) throws -> ClaimedSegment {
        try connection.query("UPDATE transfers SET state = 'downloading', size = 1048576, accepts_ranges = true WHERE id = $1", [id])
        try connection.query(
            "INSERT INTO segments (transfer_id, generation, idx, host, byte_offset, length) SELECT id, generation, 0, host, 0, 1048576 FROM transfers WHERE id = $1",
            [id])
        return try #require(try SegmentLeases(connection, workerID: "a").claim(limit: 1, lease: 60).first)
    }

    @Test("after a lease moves to another worker, the first holder's checkpoint and completion change nothing")
    func fenceAfterLeaseMoves() throws {
        let database = try TestDatabase()
        _ = try Self.downloading(database, segments: 1)
        let connection = try PostgresConnection(conninfo: database.url)
        let first = try #require(try SegmentLeases(connection, workerID: "a").claim(limit: 1, lease: 60).first)
        #expect(try SegmentLeases(connection, workerID: "a").checkpoint(first, bytesDone: 1000, lease: 60, part: nil) == .recorded)

        try Self.expireLeases(connection)
        #expect(try SegmentLeases.rescueExpired(on: connection) == 1)
        let second = try #require(try SegmentLeases(connection, workerID: "b").claim(limit: 1, lease: 60).first)
        #expect(second.id == first.id && second.bytesDone == 1000, "the rescue kept the checkpointed bytes")

        #expect(try SegmentLeases(connection, workerID: "a").checkpoint(first, bytesDone: 500_000, lease: 60, part: nil) == .leaseLost)
        #expect(try SegmentLeases(connection, workerID: "a").complete(first, bytesDone: 1 << 20, part: nil) == .leaseLost)
        #expect(try connection.query("SELECT bytes_done FROM segments WHERE id = $1", [first.id]).first?.int64("bytes_done") == 1000)
        #expect(try SegmentLeases(connection, workerID: "b").complete(second, bytesDone: 1 << 20, part: nil) == .transferReady)
        #expect(try connection.query("SELECT state FROM transfers").first?["state"] == "finalizing")
    }

    @Test("a completion after the lease ran out and was rescued, while nobody took the segment, is recorded: the token fences, not the clock")
    func completionAfterAnUntakenExpiry() throws {
        let database = try TestDatabase()
        _ = try Self.downloading(database, segments: 2)
        let connection = try PostgresConnection(conninfo: database.url)
        let leases = SegmentLeases(connection, workerID: "a")
        let claimed = try leases.claim(limit: 2, lease: 60)
        try #require(claimed.count == 2)
        // The worker was cut off from the database (an outage) while it fetched both; meanwhile
        // their leases ran out and a rescuer, back first, put them in the queue.
        try Self.expireLeases(connection)
        #expect(try SegmentLeases.rescueExpired(on: connection) == 2)
        #expect(try leases.complete(claimed[0], bytesDone: 1 << 20, part: nil) == .recorded, "nobody took it: the finished bytes count")
        // The other was taken over before the first holder came back: that one is fenced.
        let taken = try #require(try SegmentLeases(connection, workerID: "b").claim(limit: 1, lease: 60).first)
        #expect(taken.id == claimed[1].id)
        #expect(try leases.complete(claimed[1], bytesDone: 1 << 20, part: nil) == .leaseLost)
        #expect(try SegmentLeases(connection, workerID: "b").complete(taken, bytesDone: 1 << 20, part: nil) == .transferReady)
        #expect(try connection.query("SELECT state FROM transfers").first?["state"] == "finalizing")
        let running = try connection.query("SELECT busy FROM origin_hosts").first?.int64("busy")
        #expect(running == 0, "no connection slot is left counted")
    }

    @Test("a checkpoint after the lease ran out and was rescued, while nobody took the segment, records its bytes: the next claim resumes after them")
    func checkpointAfterAnUntakenExpiry() throws {
        let database = try TestDatabase()
        _ = try Self.downloading(database, segments: 1)
        let connection = try PostgresConnection(conninfo: database.url)
        let leases = SegmentLeases(connection, workerID: "a")
        let first = try #require(try leases.claim(limit: 1, lease: 60).first)
        #expect(try leases.checkpoint(first, bytesDone: 1000, lease: 60, part: nil) == .recorded)
        // Cut off from the database while it fetched: its lease ran out and a rescuer queued the segment.
        try Self.expireLeases(connection)
        #expect(try SegmentLeases.rescueExpired(on: connection) == 1)
        #expect(try leases.checkpoint(first, bytesDone: 600_000, lease: 60, part: nil) == .leaseLost, "the holder stops: the segment waits for a claim")
        let next = try #require(try SegmentLeases(connection, workerID: "b").claim(limit: 1, lease: 60).first)
        #expect(next.id == first.id && next.bytesDone == 600_000, "the bytes the holder made durable are not fetched again")
        // Taken over now: the first holder's reports change nothing.
        #expect(try leases.checkpoint(first, bytesDone: 900_000, lease: 60, part: nil) == .leaseLost)
        #expect(try connection.query("SELECT bytes_done FROM segments WHERE id = $1", [first.id]).first?.int64("bytes_done") == 600_000)
        #expect(try connection.query("SELECT sum(busy) AS busy FROM origin_hosts").first?.int64("busy") == 1, "one slot, the new holder's")
    }

    @Test("a worker whose lease moved on cannot start the transfer over: only the holder's report counts")
    func startOverNeedsTheLease() throws {
        let database = try TestDatabase()
        let id = try Self.downloading(database, segments: 1)
        let connection = try PostgresConnection(conninfo: database.url)
        let leases = TransferLeases(connection, workerID: "a")
        let first = try #require(try SegmentLeases(connection, workerID: "a").claim(limit: 1, lease: 60).first)
        try Self.expireLeases(connection)
        #expect(try SegmentLeases.rescueExpired(on: connection) == 1)
        let second = try #require(try SegmentLeases(connection, workerID: "b").claim(limit: 1, lease: 60).first)
        // The frozen first holder wakes to a gone file or upload: the worker that took over may have published it.
        #expect(try leases.downloadLost(by: .segment(first), code: .partialMissing, reason: "the partial file is gone") == .fenced)
        #expect(try leases.originChanged(by: .segment(first), reason: "ETag changed") == .fenced)
        let unchanged = try connection.query("SELECT state, generation, restarts FROM transfers").first
        #expect(unchanged.map { [$0["state"], $0["generation"], $0["restarts"]] } == ["downloading", "0", "0"])
        #expect(try SegmentLeases(connection, workerID: "b").complete(second, bytesDone: 1 << 20, part: nil) == .transferReady)
        // The same for a finalizer: one whose claim moved to another finalizer changes nothing; the holder's report counts.
        let stale = try #require(try TransferLeases(connection, workerID: "a").claimFinalizing(lease: 60))
        try connection.query("UPDATE transfers SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [id])
        let holder = try #require(try TransferLeases(connection, workerID: "b").claimFinalizing(lease: 60))
        #expect(try leases.downloadLost(by: .finalizer(stale), code: .partialMissing, reason: "the partial file is gone") == .fenced)
        #expect(try connection.query("SELECT state FROM transfers").first?["state"] == "finalizing")
        #expect(try leases.downloadLost(by: .finalizer(holder), code: .partialMissing, reason: "the partial file is gone") == .restarted)
        #expect(try connection.query("SELECT state, generation FROM transfers").first.map { [$0["state"], $0["generation"]] } == ["pending", "1"])
    }

    @Test("a connection plans the segment claim once: every claim runs its generic plan, and still takes the right segments")
    func claimRunsItsGenericPlan() throws {
        let database = try TestDatabase()
        let id = try Self.downloading(database, segments: 8)
        let connection = try PostgresConnection(conninfo: database.url)
        let leases = SegmentLeases(connection, workerID: "a")
        var claimed: [Int] = []
        for _ in 0..<8 { claimed += try leases.claim(limit: 1, lease: 60).map(\.index) }
        #expect(claimed == Array(0..<8), "the claims follow the queue's order")
        #expect(try leases.claim(limit: 1, lease: 60).isEmpty)
        // PostgreSQL would plan each of a prepared statement's first five runs for its parameters.
        let plans = try connection.query(
            "SELECT sum(generic_plans) AS generic, sum(custom_plans) AS custom FROM pg_prepared_statements WHERE statement LIKE '%UPDATE segments s SET state = ''running''%'"
        ).first
        #expect(try plans?.int64("custom") == 0)
        #expect(try plans?.int64("generic") ?? 0 >= 9)
        #expect(
            try connection.query("SELECT count(*) AS n FROM segments WHERE transfer_id = $1 AND state = 'running' AND worker_id = 'a'", [id]).first?.int64("n")
                == 8)
    }

    @Test("many threads claiming one host never hold more segments than its limit, and every segment is done once")
    func hostLimitUnderManyThreads() throws {
        let database = try TestDatabase()
        let id = try Self.downloading(database, segments: 60)
        let limit = 3
        let admin = try PostgresConnection(conninfo: database.url)
        try admin.query(
            "INSERT INTO origin_hosts (host, max_running) VALUES ('origin.test:8080', $1) ON CONFLICT (host) DO UPDATE SET max_running = $1", [limit])
        let held = Atomic<Int>(0)
        let peak = Atomic<Int>(0)
        let completions = Mutex<[Int64]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 12) { thread in
            do {
                let connection = try PostgresConnection(conninfo: database.url)
                let leases = SegmentLeases(connection, workerID: "w\(thread)")
                var idle = 0
                while idle < 20 {
                    let claimed = try leases.claim(limit: 2, lease: 60)
                    guard !claimed.isEmpty else {
                        idle += 1
                        usleep(5_000)
                        continue
                    }
                    idle = 0
                    let now = held.add(claimed.count, ordering: .sequentiallyConsistent).newValue
                    peak.max(now, ordering: .sequentiallyConsistent)
                    usleep(2_000)
                    for segment in claimed {
                        // Leave the count before the row, so the count is never below the truth.
                        held.subtract(1, ordering: .sequentiallyConsistent)
                        _ = try leases.complete(segment, bytesDone: 1 << 20, part: nil)
                        completions.withLock { $0.append(segment.id) }
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(peak.load(ordering: .sequentiallyConsistent) <= limit, "at most \(limit) segments held at once")
        let done = completions.withLock { $0 }
        #expect(done.count == 60 && Set(done).count == 60, "each segment completed exactly once")
        #expect(try admin.query("SELECT state FROM transfers WHERE id = $1", [id]).first?["state"] == "finalizing")
    }

    @Test("rescuers of several workers at once put every expired segment back exactly once, never deadlocking")
    func concurrentRescues() throws {
        let database = try TestDatabase()
        let admin = try PostgresConnection(conninfo: database.url)
        let failures = Mutex<[String]>([])
        let rescued = Atomic<Int>(0)
        for round in 0..<5 {
            let host = "rescue-\(round).test:8080"
            _ = try Self.downloading(database, segments: 120, host: host)
            try admin.query("UPDATE segments SET state = 'running', lease_token = gen_random_uuid(), worker_id = 'gone' WHERE host = $1", [host])
            try Self.expireLeases(admin)
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                do {
                    let connection = try PostgresConnection(conninfo: database.url)
                    rescued.add(try SegmentLeases.rescueExpired(on: connection), ordering: .sequentiallyConsistent)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(rescued.load(ordering: .sequentiallyConsistent) == 600, "each expired segment rescued once")
        #expect(try admin.query("SELECT count(*) AS n FROM segments WHERE state = 'queued'").first?.int64("n") == 600)
        #expect(try admin.query("SELECT coalesce(sum(busy), 0) AS n FROM origin_hosts").first?.int64("n") == 0, "no slot left counted")
    }

    @Test("a new generation fences out every write of the old one")
    func generations() throws {
        let database = try TestDatabase()
        _ = try Self.downloading(database, segments: 2)
        let connection = try PostgresConnection(conninfo: database.url)
        let old = try SegmentLeases(connection, workerID: "a").claim(limit: 2, lease: 60)
        try #require(old.count == 2)
        #expect(try TransferLeases(connection, workerID: "a").originChanged(by: .segment(old[0]), reason: "ETag changed") == .restarted)
        #expect(try connection.query("SELECT state, generation FROM transfers").first.map { [$0["state"], $0["generation"]] } == ["pending", "1"])
        for segment in old {
            #expect(try SegmentLeases(connection, workerID: "a").checkpoint(segment, bytesDone: 10, lease: 60, part: nil) == .leaseLost)
            #expect(try SegmentLeases(connection, workerID: "a").complete(segment, bytesDone: 1 << 20, part: nil) == .leaseLost)
        }
        #expect(try connection.query("SELECT state FROM transfers").first?["state"] == "pending", "a late completion does not move the new generation")
        // A late report from generation 0 (the other lane saw the same change) touches nothing.
        #expect(try TransferLeases(connection, workerID: "a").originChanged(by: .segment(old[1]), reason: "late") == .fenced)
        #expect(try connection.query("SELECT state FROM transfers").first?["state"] == "pending")
    }

    @Test("a lost partial file starts the transfer over once, then fails it; retry then starts it over as a new generation")
    func lostPartialStartsOver() throws {
        let database = try TestDatabase()
        let id = try Self.downloading(database, segments: 2)
        let connection = try PostgresConnection(conninfo: database.url)
        let leases = TransferLeases(connection, workerID: "a")
        let old = try SegmentLeases(connection, workerID: "a").claim(limit: 2, lease: 60)
        try #require(old.count == 2)
        let reason = "the partial file /data/x.haul-partial is gone"
        #expect(try leases.downloadLost(by: .segment(old[0]), code: .partialMissing, reason: reason) == .restarted)
        let restarted = try connection.query("SELECT state, generation, error_code FROM transfers").first
        #expect(restarted.map { [$0["state"], $0["generation"], $0["error_code"]] } == ["pending", "1", "partial-missing"])
        // A late report from generation 0 touches nothing; the new generation loses its file too: the transfer fails, saying so.
        #expect(try leases.downloadLost(by: .segment(old[1]), code: .partialMissing, reason: "late") == .fenced)
        let new = try Self.nextGeneration(connection, id)
        #expect(try leases.downloadLost(by: .segment(new), code: .partialMissing, reason: reason) == .failed)
        let failed = try connection.query("SELECT state, error, error_code FROM transfers").first
        #expect(failed?["state"] == "failed" && failed?["error_code"] == "partial-missing")
        #expect(failed?["error"] == "\(reason) again; run 'haul retry \(id)' to start over")
        try TransferStore(connection).apply(.retry, to: id)
        #expect(try connection.query("SELECT state, generation FROM transfers").first.map { [$0["state"], $0["generation"]] } == ["pending", "2"])
        // A retry that resumes (another failure) gives the transfer its one automatic start-over back too.
        try connection.query("UPDATE transfers SET state = 'failed', error_code = 'http', restarts = 1 WHERE id = $1", [id])
        try TransferStore(connection).apply(.retry, to: id)
        #expect(try connection.query("SELECT generation, restarts FROM transfers").first.map { [$0["generation"], $0["restarts"]] } == ["2", "0"])
    }

    @Test("each operator action's SQL guard agrees with the transition table, from every state")
    func operatorGuardsMatchTheTable() throws {
        let database = try TestDatabase()
        let connection = try PostgresConnection(conninfo: database.url)
        let store = TransferStore(connection)
        for action in [OperatorAction.cancel, .retry, .pause, .resume] {
            for state in TransferState.allCases {
                let id = try Self.downloading(database, segments: 2)
                try connection.query(
                    "UPDATE transfers SET state = $2, paused_from = CASE WHEN $2 = 'paused' THEN 'downloading' END WHERE id = $1", [id, state.rawValue])
                let verdict = action.verdict(transfer: id, state: state)
                #expect((verdict == .apply) == TransferTransitions.allows(action.event, from: state), "\(action) from \(state)")
                var refusal: HaulError?
                do { try store.apply(action, to: id) } catch let error as HaulError { refusal = error }
                let after = try #require(TransferState(rawValue: try connection.query("SELECT state FROM transfers WHERE id = $1", [id]).first?["state"] ?? ""))
                switch verdict {
                case .apply:
                    #expect(refusal == nil, "\(action) from \(state): \(refusal.map(String.init(describing:)) ?? "")")
                    #expect(TransferTransitions.targets(of: action.event, from: state).contains(after), "\(action) from \(state) entered \(after)")
                case .alreadyDone:
                    #expect(refusal == nil && after == state, "\(action) of a \(state) transfer is a no-op")
                case .refuse:
                    #expect(refusal?.code == .invalidTransition, "\(action) from \(state)")
                    #expect(after == state, "a refused \(action) left \(state) alone")
                }
            }
        }
    }
}
