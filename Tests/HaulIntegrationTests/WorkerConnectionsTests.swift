import Foundation
import HaulTestSupport
import Testing

/// A worker holds a fixed few database connections whatever its concurrency, so that a fleet
/// fits PostgreSQL's `max_connections` and the admin commands still connect.
@Suite("database connections per worker")
struct WorkerConnectionsTests {
    @Test("a worker at --concurrency 16 never holds more than 5 connections while it works")
    func atMostFive() throws {
        let cluster = try Cluster("connections")
        defer { cluster.stopWorkers() }
        var ids: [Int64] = []
        for index in 0..<4 {
            let file = try Origin.file("connections/big-\(index).bin", size: 24 * 1_048_576)
            ids.append(try cluster.enqueue(Harness.origin + "/slow" + file.path, ["--dest", "big-\(index).bin", "--segment-size", "4MiB"]))
        }
        for index in 0..<40 {
            let file = try Origin.file("connections/small-\(index).bin", size: 2048 + index)
            ids.append(try cluster.enqueue(Harness.origin + file.path, ["--dest", "small/\(index).bin"]))
        }
        let worker = try cluster.startWorker(["--concurrency", "16"])
        var most = 0
        var running = 0
        let final: Set<String> = ["done", "failed", "canceled"]
        let finished = try Harness.waitUntil(timeout: 90) {
            let row = try cluster.database.scalar(
                """
                SELECT (SELECT count(*) FROM pg_stat_activity WHERE application_name = 'haul/\(worker.pid)') || ' ' ||
                       (SELECT count(*) FROM segments WHERE state = 'running')
                """
            ).split(separator: " ").compactMap { Int($0) }
            most = max(most, row.first ?? 0)
            running = max(running, row.last ?? 0)
            return try ids.allSatisfy { final.contains(try cluster.state($0)) }
        }
        #expect(finished)
        #expect(running > 5, "more segments ran at once (\(running)) than the worker has connections")
        #expect(most > 0 && most <= 5, "the worker held \(most) connections at most")
        #expect(try ids.allSatisfy { try cluster.state($0) == "done" })
    }
}
