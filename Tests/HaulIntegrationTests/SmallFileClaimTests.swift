import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Testing

/// The claim unit of a small file (issue 51): a batch claim leases its files where they are,
/// `pending` (`TransferLeases.restClaim`), and records them `done` in one statement. What must
/// hold: who holds a file shows, the history keeps its final state, fencing, a killed or frozen
/// worker's files fetched again, and the rule for a cancel that comes while a file is in flight.
@Suite("the small-file claim unit")
struct SmallFileClaimTests {
    @Test("a batch claim leases its files in place: status says who holds them, others pass them by, the history keeps their final state")
    func claimedInPlace() throws {
        let cluster = try Cluster("claim-unit")
        let conn = try PostgresConnection(conninfo: cluster.database.url)
        let host = "claim-unit.test"
        try HostLimits.set(conn, host: host, limit: 4)
        let store = TransferStore(conn)
        for index in 0..<8 { _ = try store.enqueue(NewTransfer(url: "http://\(host)/f-\(index)", dest: "f-\(index)", segmentSize: 4 << 20)) }
        let a = TransferLeases(conn, workerID: "worker-a")
        let batch = try a.claimPlanning(lease: 30, limit: 6, connections: 2)
        #expect(batch.claims.count == 6 && batch.connections == 2)
        let rest = batch.claims.filter { !$0.holdsSlot }
        let ids = rest.map { String($0.info.id) }.joined(separator: ",")
        #expect(try cluster.database.scalar("SELECT string_agg(DISTINCT state, ',') FROM transfers WHERE id IN (\(ids))") == "pending")
        #expect(try cluster.database.scalar("SELECT count(*) FROM transfer_events WHERE transfer_id IN (\(ids))") == "0", "a claim is no change of state")
        // A BEFORE row trigger would lock each claimed row before its HOT update (a tuple write
        // and a WAL record more per row; migration 0032). pg_trigger.tgtype bit 1 is BEFORE.
        #expect(
            try cluster.database.scalar("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'transfers'::regclass AND NOT tgisinternal AND tgtype & 2 <> 0")
                == "0",
            "transfers has no BEFORE row trigger")

        // `haul status`: pending, claimed by worker-a, and no reason to wait.
        let status = try cluster.status(rest[0].info.id)
        #expect(status["state"] as? String == "pending" && status["claimed_by"] as? String == "worker-a", "\(status)")
        #expect(status["waiting"] is NSNull, "\(status)")
        let text = try cluster.haul(["status", String(rest[0].info.id)])
        #expect(text.stdout.contains("pending (claimed by worker worker-a, fetching in a batch)"), "\(text.stdout)")

        // Another worker's claim passes the leased files by and takes the two left.
        let b = TransferLeases(try PostgresConnection(conninfo: cluster.database.url), workerID: "worker-b")
        let other = try b.claimPlanning(lease: 30, limit: 6, connections: 2).claims
        #expect(other.count == 2 && Set(other.map(\.info.id)).isDisjoint(with: batch.claims.map(\.info.id)))

        // Canceled before the fence: not held, so never published. Canceled after it: the file is
        // in place, and the record keeps it, `done` with a note.
        let early = rest[0]
        let late = rest[1]
        try store.apply(.cancel, to: early.info.id)
        let held = try a.held(batch.claims)
        #expect(!held.contains(early.info.id) && held.contains(late.info.id))
        try store.apply(.cancel, to: late.info.id)
        let published = batch.claims.filter { held.contains($0.info.id) }.map { TransferLeases.ProbedFile.oneByte($0, host: host) }
        let finished = try a.finish(probed: published)
        #expect(finished == Set(published.map(\.claim.info.id)))
        #expect(try cluster.state(early.info.id) == "canceled")
        #expect(try cluster.state(late.info.id) == "done")
        let lateStatus = try cluster.haul(["status", String(late.info.id)])
        #expect(lateStatus.stdout.contains("note:      \(TransferLeases.canceledTooLate)"), "\(lateStatus.stdout)")

        // The history of a small file is its final state, kept on its row (no event row is
        // written for it); the one canceled too late shows both changes, a slot holder its two.
        let view = FleetView(conn)
        let history = { (id: Int64) in try view.history(of: id).map { "\($0.from)>\($0.to)" }.joined(separator: " ") }
        #expect(try history(rest[2].info.id) == "pending>done")
        #expect(try cluster.database.scalar("SELECT count(*) FROM transfer_events WHERE transfer_id = \(rest[2].info.id)") == "0")
        #expect(try history(late.info.id) == "pending>canceled canceled>done")
        #expect(try history(batch.claims.first { $0.holdsSlot }!.info.id) == "pending>planning planning>done")
        #expect(try history(early.info.id) == "pending>canceled", "a canceled file's history does not end in done")
        // A file retried before its batch took it: its events, then the final change from where they left it.
        try conn.query(
            "INSERT INTO transfer_events (transfer_id, at, from_state, to_state) VALUES ($1, now() - interval '1 minute', 'failed', 'pending')",
            [rest[3].info.id])
        #expect(try history(rest[3].info.id) == "failed>pending pending>done")
        #expect(try cluster.database.scalar("SELECT count(*) FROM segments") == "0", "a file that fit in its probe has no segment row")
        #expect(try cluster.database.scalar("SELECT sum(bytes) FROM host_throughput WHERE host = '\(host)'") == String(published.count))
        let done = try cluster.status(rest[2].info.id)
        #expect(done["bytes_done"] as? Int == 1 && done["claimed_by"] is NSNull, "\(done)")
    }

    @Test("a frozen worker whose batch was taken over publishes and records nothing when it wakes")
    func frozenMidClaim() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try (0..<12).map { try origin.create("/frozen-claim/\($0).bin", size: 60_000, ["rate": 100_000]) }
        let cluster = try Cluster("claim-frozen")
        let manifest = Harness.temporaryDirectory("claim-frozen") + "/list.txt"
        try served.map { "\($0.url) \($0.path.dropFirst())" }.joined(separator: "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        #expect(try cluster.haul(["enqueue", "--manifest", manifest, "--batch", "f"]).status == 0)
        let frozen = try cluster.startWorker(["--concurrency", "2", "--lease", "1s"])
        let claimed = "SELECT count(*) FROM transfers WHERE state IN ('pending','planning') AND lease_expires_at > now()"
        try #require(Harness.waitUntil(timeout: 20) { (Int(try cluster.database.scalar(claimed)) ?? 0) >= 4 })
        usleep(300_000)  // Its requests are under way; no file is whole yet.
        frozen.signal(SIGSTOP)
        let frozenID = try cluster.database.scalar("SELECT id FROM workers WHERE pid = \(frozen.pid)")
        // Another worker takes the batch over once its leases run out. The files whose partial
        // file the frozen one holds locked wait for their retry (as many as it takes here).
        let other = try cluster.startWorker(["--concurrency", "2", "--lease", "1s", "--max-attempts", "30"])
        let settled = """
            SELECT count(*) FILTER (WHERE state = 'done') || ' ' || count(*) FILTER (WHERE state = 'done' OR (state = 'pending' AND error IS NOT NULL))
            FROM transfers
            """
        #expect(
            try Harness.waitUntil(timeout: 30) {
                let counts = try cluster.database.scalar(settled).split(separator: " ")
                return Int(counts[0]) ?? 0 >= 4 && counts[1] == "12"
            })
        // A file published again would be a new inode at the name (a rename into place).
        let inodes = served.map { Self.inode(cluster.storage + $0.path) }
        // It wakes, finds its claim lost, and is stopped before it claims anything new.
        frozen.signal(SIGCONT)
        #expect(Harness.waitUntil(timeout: 30) { frozen.stderr.contains("lease lost") }, "\(frozen.stderr)")
        frozen.signal(SIGTERM)
        _ = frozen.wait(timeout: 10)
        let wait = try cluster.haul(["wait", "--batch", "f", "--timeout", "60s"])
        #expect(
            wait.status == 0,
            "\(wait.stdout) \(wait.stderr) \((try? cluster.database.scalar("SELECT string_agg(id || ' ' || state || ': ' || coalesce(error, ''), E'\\n') FROM transfers WHERE state <> 'done'")) ?? "")"
        )
        other.signal(SIGTERM)
        _ = other.wait(timeout: 10)

        #expect(!frozen.stderr.contains("transfer done"), "\(frozen.stderr)")
        #expect(try cluster.database.scalar("SELECT count(*) FROM transfers WHERE state = 'done' AND worker_id = '\(frozenID)'") == "0")
        for file in served { #expect(cluster.sha256(String(file.path.dropFirst())) == file.sha256, "\(file.path)") }
        #expect(
            zip(served.map { Self.inode(cluster.storage + $0.path) }, inodes).allSatisfy { $1 == 0 || $0 == $1 },
            "no file already in place was put there again")
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")
    }

    /// The inode at `path`, 0 when nothing is there.
    private static func inode(_ path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
    }
}
