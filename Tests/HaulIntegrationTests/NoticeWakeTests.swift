import Foundation
import HaulTestSupport
import Testing

/// What a notice of work (`NOTIFY haul_work`) costs the database (issue 55, item 5). Every
/// notice woke every idle lane of every worker, and each asked the database for work: 16 workers
/// at `-x 4` answered an enqueue with 64 looks, nearly all finding nothing. A notice now wakes one
/// lane per worker, which wakes the next only if it found work. Counted, not timed: the scans of
/// the `segments` table, which each look (`WorkProbe`) reads twice, from PostgreSQL's statistics,
/// complete once the worker's connections have closed.
@Suite("a notice of work wakes one lane per worker")
struct NoticeWakeTests {
    /// A worker that only a notice wakes: it polls every 10 minutes, and no rescuer reads the tables.
    private func idleWorker(_ cluster: Cluster) throws -> Child {
        let worker = try cluster.startWorker(["--concurrency", "4", "--roles", "planner,fetcher,finalizer", "--poll-interval", "10m"])
        let listening = try Harness.waitUntil(timeout: 30) {
            try cluster.database.scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'haul/\(worker.pid)' AND query = 'LISTEN haul_work'") == "1"
        }
        try #require(listening, "the worker listens")
        // Its lanes' first looks, at start, are over.
        Thread.sleep(forTimeInterval: 1)
        return worker
    }

    @Test("30 notices with nothing to do cost about one look each, not one per lane")
    func noticeWakesOneLane() throws {
        let cluster = try Cluster("notice-wake")
        _ = try idleWorker(cluster)
        let notices = 30
        for _ in 0..<notices {
            _ = try cluster.database.scalar("SELECT pg_notify('haul_work', '')")
            // Apart, so that the worker hears each on its own.
            Thread.sleep(forTimeInterval: 0.3)
        }
        cluster.stopWorkers()
        let scans = try Int(cluster.database.scalar("SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = 'segments'")) ?? -1
        // Two scans a look; the start's looks (4 lanes) and housekeeping add a few dozen at most.
        // Every lane waking (the old way) made 8 a notice: 258 in all here, 16 without notices.
        #expect(scans >= 0 && scans <= notices * 4 + 40, "\(scans) scans of segments for \(notices) notices")
    }

    @Test("a notice alone gets an idle worker's lanes going: every file of an enqueue is done")
    func noticeStartsWork() throws {
        let cluster = try Cluster("notice-work")
        _ = try idleWorker(cluster)
        var ids: [Int64] = []
        for index in 0..<6 {
            let file = try Origin.file("notice-wake/f-\(index).bin", size: 1024 + index)
            ids.append(try cluster.enqueue(Harness.origin + file.path, ["--dest", "f-\(index).bin"]))
        }
        #expect(try cluster.waitFinal(ids, timeout: 60).allSatisfy { $0 == "done" })
        cluster.stopWorkers()
    }
}
