import Foundation
import HaulTestSupport
import Testing

/// Two transfers of one destination name one partial file (`FILE.haul-partial`): while the
/// first is failed or interrupted, the second may write its own bytes into it. The first must
/// then start over when it is taken up again, never resume over the other's bytes and publish a
/// mix of two files.
@Suite("a partial file two transfers wrote")
struct SharedPartialTests {
    @Test("retry of a failed transfer whose partial file another transfer of its destination wrote meanwhile starts it over: its own file, whole")
    func retryStartsOver() throws {
        let cluster = try Cluster("shared-partial")
        defer { cluster.stopWorkers() }
        let first = try Origin.file("safety/shared/first.bin", size: 32 * 1_048_576)
        let second = try Origin.file("safety/shared/second.bin", size: 32 * 1_048_576)
        let id = try partlyDownloadedThenFailed(first, in: cluster)
        // The second writes its first segments where the first's are, then fails as well.
        let other = try partlyDownloadedThenFailed(second, in: cluster)

        #expect(try cluster.haul(["retry", String(id)]).status == 0)
        #expect(try cluster.database.scalar("SELECT generation FROM transfers WHERE id = \(id)") == "1", "started over")
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("shared.bin") == first.sha256)
        // The second, retried in turn, finds its bytes gone with the published file: it starts over too.
        #expect(try cluster.haul(["retry", String(other)]).status == 0)
        #expect(try cluster.waitFinal([other], timeout: 60) == ["done"])
        #expect(cluster.sha256("shared.bin") == second.sha256)
    }

    @Test("a failed transfer nobody else wrote after is resumed by retry, not started over")
    func retryResumesWhenAlone() throws {
        let cluster = try Cluster("alone-partial")
        defer { cluster.stopWorkers() }
        let file = try Origin.file("safety/shared/alone.bin", size: 32 * 1_048_576)
        let id = try partlyDownloadedThenFailed(file, in: cluster)
        #expect(try cluster.haul(["retry", String(id)]).status == 0)
        #expect(try cluster.database.scalar("SELECT generation FROM transfers WHERE id = \(id)") == "0", "resumed")
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("shared.bin") == file.sha256)
    }

    @Test(
        "a haul get rerun after a get of another URL saved into the same file meanwhile starts over: its own file, whole; the other's rerun then keeps it",
        arguments: ["one database", "two databases"])
    func getRerunStartsOver(databases: String) throws {
        let database = try TestDatabase()
        // Recorded in another database, the other get is in no history this one can read: the
        // partial file's mark tells.
        let otherDatabase = databases == "two databases" ? try TestDatabase() : database
        let work = Harness.temporaryDirectory("get-shared")
        defer { try? FileManager.default.removeItem(atPath: work) }
        // Origin files of this case's own: the two cases run at once, and the other rewriting
        // them (a new Last-Modified) made this one's first get start over as a new generation
        // mid-way, whose partial file the second get then never touched (a CI run).
        let folder = "safety/get-shared/" + (databases == "one database" ? "one" : "two")
        let first = try Origin.file(folder + "/first.bin", size: 32 * 1_048_576)
        let second = try Origin.file(folder + "/second.bin", size: 32 * 1_048_576)
        let get = { (file: (path: String, sha256: String)) in
            ["get", Harness.origin + file.path, "-o", work + "/same.bin", "--segment-size", "2MiB", "--connections", "1", "--limit-rate", "4M"]
        }
        for (file, database) in [(first, database), (second, otherDatabase)] {
            try Run.haulInterruptedAfterASegment(get(file), of: file.path, database: database)
        }

        let again = try Run.haul(get(first), database: database.url)
        #expect(again.status == 0, "\(again.stderr)")
        // The history tells within one database, the partial file's mark across two.
        #expect(again.stderr.contains("starting transfer 1 over: another transfer saved this file since it stopped"), "\(again.stderr)")
        #expect(Origin.sha256(file: work + "/same.bin") == first.sha256)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work) == ["same.bin"])
        // The other get, run again, finds the first's file where its own would go, and keeps it.
        let other = try Run.haul(get(second), database: otherDatabase.url)
        #expect(other.status == 2 && other.stderr.contains("haul did not download it from this URL"), "\(other.stderr)")
        #expect(Origin.sha256(file: work + "/same.bin") == first.sha256)
    }

    /// Enqueues `file` (32 MiB) to `shared.bin` (2 MiB segments, one attempt), lets a worker
    /// paced to 4 MiB/s finish at least one segment, then takes the file away from the origin so the
    /// segments not yet started fail, and the transfer with them; puts it back and stops the worker.
    private func partlyDownloadedThenFailed(_ file: (path: String, sha256: String), in cluster: Cluster) throws -> Int64 {
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "shared.bin", "--segment-size", "2MiB", "--max-attempts", "1"])
        let worker = try cluster.startWorker(["--limit-rate", "4M"])
        let segmentDone = try Harness.waitUntil(timeout: 30) {
            try cluster.database.scalar("SELECT count(*) FROM segments WHERE transfer_id = \(id) AND state = 'done'") != "0"
        }
        try #require(segmentDone, "no segment done: \((try? cluster.status(id)) ?? [:])")
        let origin = Harness.docroot + file.path
        try FileManager.default.moveItem(atPath: origin, toPath: origin + ".away")
        #expect(try cluster.waitFinal([id], timeout: 60) == ["failed"])
        try FileManager.default.moveItem(atPath: origin + ".away", toPath: origin)
        worker.signal(SIGTERM)
        _ = worker.wait(timeout: 15)
        return id
    }
}
