import Foundation
import HaulTestSupport
import Testing

/// The Prometheus gauges, `haul workers`, `haul status` and the tables agree during a live transfer.
@Suite("figures agree")
struct FiguresAgreeTests {
    struct Figures: Equatable {
        var queued = 0, running = 0, done = 0
    }

    static func metrics(_ port: Int) throws -> [String: Double] {
        let text = try Run.program("/usr/bin/curl", ["-s", "http://127.0.0.1:\(port)/metrics"], environment: [:]).stdout
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    static func tables(_ cluster: Cluster, _ id: Int64) throws -> Figures {
        let text = try cluster.database.scalar(
            """
            SELECT count(*) FILTER (WHERE s.state = 'queued') || ',' || count(*) FILTER (WHERE s.state = 'running') || ',' || count(*) FILTER (WHERE s.state = 'done')
            FROM segments s JOIN transfers t ON t.id = s.transfer_id AND t.generation = s.generation WHERE t.id = \(id)
            """)
        let numbers = text.split(separator: ",").compactMap { Int($0) }
        guard numbers.count == 3 else { return Figures() }
        return Figures(queued: numbers[0], running: numbers[1], done: numbers[2])
    }

    @Test("haul_segments{state}, queue depth, workers' segments held, status and the tables show the same numbers")
    func liveTransfer() throws {
        let cluster = try Cluster("figures")
        let file = try Origin.file("cli/figures.bin", size: 64 << 20)
        // nginx's /slow/ location: 4 MiB/s per connection, so each 16 MiB segment runs about 4 s.
        let id = try cluster.enqueue(Harness.origin + "/slow" + file.path, ["--dest", "f.bin", "--segment-size", "16MiB"])
        let port = Reliability.freePort()
        try cluster.startWorker(["--concurrency", "2", "--lease", "3s", "--metrics-addr", "127.0.0.1:\(port)"])

        var agreed: (tables: Figures, metrics: [String: Double])?
        var sawRate = false
        var last = ""
        _ = try Harness.waitUntil(timeout: 90) {
            let before = try Self.tables(cluster, id)
            let gauges = try Self.metrics(port)
            let workers = try JSONSerialization.jsonObject(with: Data(try cluster.haul(["workers", "--json"]).stdout.utf8)) as? [[String: Any]] ?? []
            let status = try cluster.status(id)["segments"] as? [String: Any] ?? [:]
            let after = try Self.tables(cluster, id)
            let held = workers.compactMap { $0["segments_held"] as? Int }.reduce(0, +)
            if held > 0 && workers.contains(where: { ($0["rate"] as? Double ?? 0) > 0 }) { sawRate = true }
            let fromMetrics = Figures(
                queued: Int(gauges["haul_segments{state=\"queued\"}"] ?? -1), running: Int(gauges["haul_segments{state=\"running\"}"] ?? -1),
                done: Int(gauges["haul_segments{state=\"done\"}"] ?? -1))
            let fromStatus = Figures(
                queued: (status["total"] as? Int ?? 0) - (status["done"] as? Int ?? 0) - (status["running"] as? Int ?? 0),
                running: status["running"] as? Int ?? -1, done: status["done"] as? Int ?? -1)
            last = "tables \(before)/\(after), metrics \(fromMetrics), status \(fromStatus), held \(held), due \(gauges["haul_queue_depth"] ?? -1)"
            guard before == after, before.done >= 1, before.running >= 1 else { return false }
            guard fromMetrics == before, fromStatus == before, held == before.running, Int(gauges["haul_queue_depth"] ?? -1) == before.queued else {
                return false
            }
            agreed = (before, gauges)
            return true
        }
        #expect(agreed != nil, "no moment where the figures agreed; last sample: \(last)")
        #expect(sawRate, "a worker holding running segments showed a rate above 0 B/s")
        #expect(try cluster.waitFinal([id], timeout: 90) == ["done"])
    }
}
