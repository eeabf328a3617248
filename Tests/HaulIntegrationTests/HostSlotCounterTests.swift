import Foundation
import HaulCore
import HaulPostgres
import HaulQueue
import HaulTestSupport
import Synchronization
import Testing

/// The per-host slot counters (`origin_hosts.busy`) that the one-statement claim
/// reads. Many threads drive HaulQueue's own claim, release and planning paths against the
/// real database while a watcher checks, in one snapshot at a time, that every host's counter
/// equals its running segments plus its slot-holding probes, and that no host is over its limit.
@Suite("host slot counters")
struct HostSlotCounterTests {
    static let limits = ["a.test": 3, "b.test": 5, "c.test": 2]

    @Test("a slot taken on a host without a row of its own creates the row and counts the slot")
    func hostWithoutRow() throws {
        let database = try TestDatabase()
        let db = try PostgresConnection(conninfo: database.url)
        let id = try TransferStore(db).enqueue(NewTransfer(url: "http://gone.test/f", dest: "f", segmentSize: 4 << 20))
        try db.query("DELETE FROM origin_hosts WHERE host = 'gone.test'")
        // Before migration 0014 this failed: "column reference host is ambiguous".
        try db.query("UPDATE transfers SET state = 'planning', holds_slot = true WHERE id = $1", [id])
        #expect(try database.scalar("SELECT busy FROM origin_hosts WHERE host = 'gone.test'") == "1")
        try db.query("UPDATE transfers SET state = 'pending' WHERE id = $1", [id])
        #expect(try database.scalar("SELECT busy FROM origin_hosts WHERE host = 'gone.test'") == "0")
    }

    @Test("migration 0034 renames hosts named with port 443 or 80, their slots and limits with them")
    func defaultPortsRenamed() throws {
        let database = try TestDatabase()
        let db = try PostgresConnection(conninfo: database.url)
        // Rows as an older haul named them: a running segment and a slot-holding probe of one
        // origin spelled with its port, and a limit set on that spelling.
        let running = try LeaseProtocolTests.downloading(database, segments: 2, host: "old.test:443")
        let probing = try TransferStore(db).enqueue(NewTransfer(url: "https://old.test:443/p", dest: "p", segmentSize: 4 << 20))
        try db.query("UPDATE transfers SET host = 'old.test:443' WHERE id IN ($1, $2)", [running, probing])
        try db.query("INSERT INTO origin_hosts (host, max_running) VALUES ('old.test:443', 5) ON CONFLICT (host) DO UPDATE SET max_running = 5")
        try db.query("UPDATE segments SET state = 'running' WHERE transfer_id = $1 AND idx = 0", [running])
        try db.query("UPDATE transfers SET state = 'planning', holds_slot = true WHERE id = $1", [probing])
        try db.query(
            "INSERT INTO host_throughput (host, minute, bytes) VALUES ('old.test:443', date_trunc('minute', now()), 7), ('old.test', date_trunc('minute', now()), 3)"
        )
        #expect(try database.scalar("SELECT busy FROM origin_hosts WHERE host = 'old.test:443'") == "2")

        let migration = try #require(Migrations.all.first { $0.version == 34 })
        try db.execute(script: migration.sql)
        #expect(try database.scalar("SELECT string_agg(DISTINCT host, ',') FROM transfers") == "old.test")
        #expect(try database.scalar("SELECT string_agg(DISTINCT host, ',') FROM segments") == "old.test")
        #expect(try database.scalar("SELECT count(*) FROM origin_hosts WHERE host LIKE 'old.test:%'") == "0")
        #expect(try database.scalar("SELECT busy || '/' || max_running FROM origin_hosts WHERE host = 'old.test'") == "2/5", "the slots and the limit moved")
        #expect(try database.scalar("SELECT string_agg(host || '=' || bytes, ',') FROM host_throughput") == "old.test=10")
        // The counter stays exact as the slots are given back under the new name.
        try db.query("UPDATE segments SET state = 'done' WHERE transfer_id = $1", [running])
        try db.query("UPDATE transfers SET state = 'pending', holds_slot = false WHERE id = $1", [probing])
        #expect(try database.scalar("SELECT busy FROM origin_hosts WHERE host = 'old.test'") == "0")
    }

    @Test("a transfer claimed again after its probe moved to a mirror's host holds its slot at its own host")
    func slotAtOwnHostAfterMirrorProbe() throws {
        let database = try TestDatabase()
        let db = try PostgresConnection(conninfo: database.url)
        _ = try TransferStore(db).enqueue(NewTransfer(url: "http://own.test/f", dest: "f", segmentSize: 4 << 20))
        let leases = TransferLeases(db, workerID: "w")
        func busy() throws -> String? {
            try database.scalar("SELECT string_agg(host || '=' || busy, ' ' ORDER BY host) FROM origin_hosts WHERE host LIKE '%.test'")
        }
        let first = try #require(try leases.claimPlanning(lease: 30, limit: 1, connections: 1).claims.first)
        #expect(try leases.holdProbeSlot(first, host: "mirror.test"))
        #expect(try busy() == "mirror.test=1 own.test=0")
        try leases.release(first)
        #expect(try busy() == "mirror.test=0 own.test=0")
        // probe_host still names the mirror (nothing clears it when the slot is given back): the
        // slot claim must not count this slot there.
        _ = try #require(try leases.claimPlanning(lease: 30, limit: 1, connections: 1).claims.first)
        #expect(try busy() == "mirror.test=0 own.test=1")
    }

    @Test("counters never drift and host limits hold under claims, completes, fails, releases, splits, rescues, cancels, pauses and probes moved to mirrors")
    func chaos() throws {
        let database = try TestDatabase()
        let setup = try PostgresConnection(conninfo: database.url)
        for (host, limit) in Self.limits { try HostLimits.set(setup, host: host, limit: limit) }
        let store = TransferStore(setup)
        var ids: [Int64] = []
        for index in 0..<90 {
            let host = Self.limits.keys.sorted()[index % Self.limits.count]
            ids.append(try store.enqueue(NewTransfer(url: "http://\(host)/f-\(index)", dest: "f-\(index)", segmentSize: 4 << 20)))
        }

        let shared = Shared()
        let group = DispatchGroup()
        func spawn(_ name: String, seed: UInt64, _ body: @escaping @Sendable (PostgresConnection, inout SplitMix64) throws -> Void) {
            group.enter()
            Thread {
                defer { group.leave() }
                var random = SplitMix64(seed: seed)
                do {
                    let conn = try PostgresConnection(conninfo: database.url)
                    while !shared.stop.load(ordering: .relaxed) { try body(conn, &random) }
                } catch {
                    shared.report.withLock { $0.errors.append("\(name): \(error)") }
                }
            }.start()
        }
        for planner in 0..<2 {
            spawn("planner \(planner)", seed: UInt64(100 + planner)) { conn, random in
                try Self.plan(TransferLeases(conn, workerID: "planner-\(planner)"), &random, shared)
            }
        }
        for fetcher in 0..<8 {
            spawn("fetcher \(fetcher)", seed: UInt64(200 + fetcher)) { conn, random in
                try Self.fetch(SegmentLeases(conn, workerID: "fetcher-\(fetcher)"), &random, shared)
            }
        }
        spawn("rescuer", seed: 300) { conn, _ in
            _ = try SegmentLeases.rescueExpired(on: conn)
            _ = try TransferLeases.rescueExpired(on: conn)
            usleep(20_000)
        }
        let transferIDs = ids
        spawn("operator", seed: 400) { conn, random in
            let id = transferIDs[Int(random.next() % UInt64(transferIDs.count))]
            let actions: [OperatorAction] = [.pause, .resume, .resume, .cancel, .retry, .retry]
            do {
                try TransferStore(conn).apply(actions[Int(random.next() % UInt64(actions.count))], to: id)
                shared.report.withLock { $0.operatorActions += 1 }
            } catch is HaulError {
                // Refused in this state, or raced with a worker: both are part of the chaos.
            }
            usleep(5_000)
        }

        let watcher = try PostgresConnection(conninfo: database.url)
        // 8 s of chaos, longer (up to a minute) until every path has run at least once: on a
        // loaded machine the rarer paths (a probe moved to a mirror's host with room) may not
        // have come up in 8 s.
        let deadline = Date(timeIntervalSinceNow: 8)
        let lastDeadline = Date(timeIntervalSinceNow: 60)
        func everyPathRan() -> Bool { shared.report.withLock { report in Self.paths.allSatisfy { report.paths[$0, default: 0] > 0 } } }
        var checks = 0
        var full: Set<String> = []
        var violations: [String] = []
        while violations.isEmpty, Date() < deadline || (Date() < lastDeadline && (!everyPathRan() || full != Set(Self.limits.keys))) {
            for host in try Self.hosts(watcher) {
                if host.busy != host.running + host.probing { violations.append("drift: \(host)") }
                if host.running + host.probing > host.limit { violations.append("over the limit: \(host)") }
                if host.busy == host.limit { full.insert(host.name) }
            }
            checks += 1
        }
        shared.stop.store(true, ordering: .relaxed)
        group.wait()
        for host in try Self.hosts(watcher) where host.busy != host.running + host.probing { violations.append("drift at the end: \(host)") }

        let final = shared.report.withLock { $0 }
        #expect(final.errors.isEmpty, "\(final.errors.prefix(5))")
        #expect(violations.isEmpty, "\(violations.prefix(5))")
        // The chaos was real: every path ran, and every host was at its limit at some point.
        #expect(checks > 20)
        #expect(full == Set(Self.limits.keys), "hosts seen at their limit: \(full.sorted())")
        for path in Self.paths {
            #expect(final.paths[path, default: 0] > 0, "path \(path) ran: \(final.paths)")
        }
        #expect(final.operatorActions > 0)
    }

    /// Every path the threads take, each of which the chaos must have run.
    static let paths = ["claim", "complete", "fail", "release", "checkpoint", "split", "abandon", "plan", "probe-release", "probe-finish", "probe-move"]

    /// What the threads share: the stop flag and what they did.
    final class Shared: Sendable {
        let stop = Atomic<Bool>(false)
        let report = Mutex(Report())
    }

    /// What the threads did.
    struct Report: Sendable {
        var paths: [String: Int] = [:]
        var operatorActions = 0
        var errors: [String] = []
    }

    struct Host: CustomStringConvertible {
        let name: String
        let busy: Int, running: Int, probing: Int, limit: Int
        var description: String { "\(name) busy \(busy), running \(running), probing \(probing), limit \(limit)" }
    }

    /// Every host's counter beside the counts of its rows, read in one snapshot.
    static func hosts(_ db: PostgresConnection) throws -> [Host] {
        try db.query(
            """
            SELECT h.host, h.busy, coalesce(h.max_running, d.max_running) AS lim,
                   (SELECT count(*) FROM segments s WHERE s.state = 'running' AND s.host = h.host) AS running,
                   (SELECT count(*) FROM transfers t WHERE t.state = 'planning' AND t.holds_slot AND coalesce(t.probe_host, t.host) = h.host) AS probing
            FROM origin_hosts h JOIN origin_hosts d ON d.host = '*' WHERE h.host <> '*'
            """
        ).rows.map {
            Host(
                name: try $0.string("host"), busy: try $0.int("busy"), running: try $0.int("running"), probing: try $0.int("probing"),
                limit: try $0.int("lim"))
        }
    }

    /// A planner: claims pending transfers of one host (some as a batch holding fewer slots
    /// than rows), moves some probes' slots to another host (a mirror's), then writes plans (the
    /// first segment claimed or all queued), finishes some as batch-probed files, releases some,
    /// and abandons some to the rescuer.
    static func plan(_ leases: TransferLeases, _ random: inout SplitMix64, _ shared: Shared) throws {
        let claims = try leases.claimPlanning(lease: 0.3, limit: 1 + Int(random.next() % 3), connections: 1 + Int(random.next() % 2)).claims
        guard !claims.isEmpty else {
            usleep(2_000)
            return
        }
        var finished: [TransferLeases.ProbedFile] = []
        for claim in claims {
            var host = OriginURL.hostKey(claim.info.url)
            // A probe that goes on to a mirror takes a slot of the mirror's host (a batch's small
            // file that holds none takes one, also of its own host); the plan's segments go there.
            var holdsSlot = claim.holdsSlot
            if random.next() % 3 == 0 {
                let mirror = Self.limits.keys.sorted()[Int(random.next() % UInt64(Self.limits.count))]
                if mirror != host || !holdsSlot, try leases.holdProbeSlot(claim, host: mirror) {
                    (host, holdsSlot) = (mirror, true)
                    count("probe-move", shared)
                }
            }
            let size = Int64(1 + random.next() % 4) << 22
            let plan = TransferLeases.Plan(
                dest: claim.info.dest ?? "x", host: host, size: size, etag: nil, lastModified: nil, contentType: nil, acceptsRanges: true,
                ranges: SegmentPlan(size: size, segmentSize: 4 << 20).ranges, unknownLength: false)
            switch random.next() % 5 {
            case 0:
                try leases.release(claim)
                count("probe-release", shared)
            case 1:
                finished.append(TransferLeases.ProbedFile(claim: claim, plan: plan, digest: nil, unchanged: true))
            case 2:
                count("probe-abandon", shared)
            default:
                // A probe that holds a slot hands it to its first segment; the others queue everything.
                _ = try leases.writePlan(claim, plan: plan, lease: 0.5, keepFirst: holdsSlot && random.next() % 2 == 0)
                count("plan", shared)
            }
        }
        if !finished.isEmpty {
            _ = try leases.finish(probed: finished)
            count("probe-finish", shared)
        }
    }

    /// A fetcher: claims segments and, for each, completes, fails, releases, checkpoints,
    /// splits another worker's straggler, or abandons it to the rescuer.
    static func fetch(_ leases: SegmentLeases, _ random: inout SplitMix64, _ shared: Shared) throws {
        let lease = [0.2, 0.5, 5][Int(random.next() % 3)]
        let segments = try leases.claim(limit: 1 + Int(random.next() % 3), lease: lease)
        guard !segments.isEmpty else {
            usleep(1_000)
            return
        }
        count("claim", shared)
        for segment in segments {
            usleep(UInt32(random.next() % 2_000))
            switch random.next() % 7 {
            case 0, 1:
                _ = try leases.complete(segment, bytesDone: segment.length ?? 0, part: nil)
                count("complete", shared)
            case 2:
                let transient = random.next() % 4 != 0
                try leases.fail(segment, error: HaulError(.internal, "chaos", transient: transient), retryAfter: 0, maxAttempts: 50)
                count("fail", shared)
            case 3:
                try leases.release(segment)
                count("release", shared)
            case 4:
                _ = try leases.checkpoint(segment, bytesDone: min(segment.length ?? 0, 1 << 20), lease: lease, part: nil)
                count("checkpoint", shared)
            case 5:
                if try leases.splitStraggler(minimumPiece: 1 << 20) { count("split", shared) }
                try leases.release(segment)
            default:
                count("abandon", shared)
            }
        }
    }

    static func count(_ path: String, _ shared: Shared) {
        shared.report.withLock { $0.paths[path, default: 0] += 1 }
    }
}
