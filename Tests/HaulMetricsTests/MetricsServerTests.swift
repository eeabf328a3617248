import Foundation
import HaulCore
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulMetrics

/// A real libmicrohttpd server on loopback, scraped with curl and read back by Python's
/// prometheus_client parser. Serialized: each test owns a server and curl processes, and
/// the machine has two cores.
@Suite(.serialized) struct MetricsServerTests {
    @Test func valuesRoundTripThroughPrometheusClient() throws {
        let registry = MetricsRegistry()
        registry.counter("haul_bytes_fetched_total", help: "Bytes written to storage.").add(123_456_789)
        registry.counter("haul_segment_retries_total", help: "Retries by reason.", labels: ["reason": "stalled"]).add(3)
        registry.counter("haul_segment_retries_total", help: "Retries by reason.", labels: ["reason": "odd \"quote\" \\ and\nnewline"]).add(0.5)
        registry.gauge("haul_queue_depth", help: "Segments waiting.\nSecond line with \\ backslash.").set(-7.25)
        registry.gauge("haul_segments", help: "Segments by state.", labels: ["state": "queued"]).set(42)
        let latency = registry.histogram("haul_claim_latency_seconds", help: "Claim latency.", buckets: [0.005, 0.1, 1])
        for value in [0.001, 0.005, 0.05, 0.5, 2] { latency.observe(value) }
        let server = try startServerOnFreePort(registry)
        defer { server.stop() }

        let reply = try curl("http://\(server.address)/metrics")
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(reply.body == registry.render())

        let samples = try parseWithPrometheusClient(reply.body)
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { $0.name == name && $0.labels == labels }?.number
        }
        #expect(value("haul_bytes_fetched_total") == 123_456_789)
        #expect(value("haul_segment_retries_total", ["reason": "stalled"]) == 3)
        #expect(value("haul_segment_retries_total", ["reason": "odd \"quote\" \\ and\nnewline"]) == 0.5)
        #expect(value("haul_queue_depth") == -7.25)
        #expect(value("haul_segments", ["state": "queued"]) == 42)
        #expect(value("haul_claim_latency_seconds_bucket", ["le": "0.005"]) == 2)
        #expect(value("haul_claim_latency_seconds_bucket", ["le": "0.1"]) == 3)
        #expect(value("haul_claim_latency_seconds_bucket", ["le": "1"]) == 4)
        #expect(value("haul_claim_latency_seconds_bucket", ["le": "+Inf"]) == 5)
        #expect(value("haul_claim_latency_seconds_count") == 5)
        #expect(value("haul_claim_latency_seconds_sum") == 2.556)
        #expect(
            Set(samples.map { "\($0.family):\($0.type)" }) == [
                "haul_bytes_fetched:counter", "haul_segment_retries:counter", "haul_queue_depth:gauge",
                "haul_segments:gauge", "haul_claim_latency_seconds:histogram",
            ])
        #expect(samples.count == 2 + 1 + 1 + 1 + 6)
    }

    @Test func healthzFollowsTheHealthCheck() throws {
        let healthy = Atomic<Bool>(true)
        let server = try startServerOnFreePort(MetricsRegistry()) {
            healthy.load(ordering: .relaxed) ? (true, "") : (false, "database unreachable since 01:02:03")
        }
        defer { server.stop() }
        let ok = try curl("http://\(server.address)/healthz")
        #expect(ok.status == 200)
        #expect(ok.body == "ok\n")
        healthy.store(false, ordering: .relaxed)
        let sick = try curl("http://\(server.address)/healthz")
        #expect(sick.status == 503)
        #expect(sick.body == "database unreachable since 01:02:03\n")
        healthy.store(true, ordering: .relaxed)
        #expect(try curl("http://\(server.address)/healthz?verbose=1").status == 200)
    }

    @Test func unknownPathsAndMethods() throws {
        let server = try startServerOnFreePort(MetricsRegistry())
        defer { server.stop() }
        #expect(try curl("http://\(server.address)/").status == 404)
        #expect(try curl("http://\(server.address)/metrics/extra").status == 404)
        let post = try curl("http://\(server.address)/metrics", ["-X", "POST", "--data", "x=1"])
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET, HEAD")
        #expect(try curl("http://\(server.address)/healthz", ["-X", "DELETE"]).status == 405)
        let head = try curl("http://\(server.address)/healthz", ["--head"])
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
    }

    @Test func addressInUseSaysWhatToDo() throws {
        let first = try startServerOnFreePort(MetricsRegistry())
        defer { first.stop() }
        let address = first.address.text
        #expect(throws: HaulError(.metricsAddrInUse, "cannot serve metrics on \(address): address in use", hint: "choose another --metrics-addr")) {
            _ = try MetricsServer(address: address, registry: MetricsRegistry(), health: { (true, "") })
        }
        #expect(try curl("http://\(address)/healthz").status == 200)
    }

    @Test func portIsFreeAgainAfterStop() throws {
        let first = try startServerOnFreePort(MetricsRegistry())
        let address = first.address
        first.stop()
        first.stop()
        let again = try MetricsServer(address: address, registry: MetricsRegistry(), health: { (true, "") })
        defer { again.stop() }
        #expect(try curl("http://\(address)/healthz").status == 200)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/net/if_inet6"), "this host has no IPv6"))
    func servesOnIPv6Loopback() throws {
        let registry = MetricsRegistry()
        registry.gauge("haul_queue_depth", help: "Queued.").set(3)
        let server = try startServerOnFreePort(registry, host: "[::1]")
        defer { server.stop() }
        #expect(server.address.family == .ipv6)
        let reply = try curl("http://\(server.address)/metrics", ["--globoff"])
        #expect(reply.status == 200)
        #expect(try parseWithPrometheusClient(reply.body).first?.number == 3)
    }

    @Test func malformedAddressIsAUsageError() {
        #expect {
            _ = try MetricsServer(address: "127.0.0.1", registry: MetricsRegistry(), health: { (true, "") })
        } throws: { ($0 as? HaulError)?.code == .usage }
    }

    @Test func addressOfAnotherHostIsRefused() {
        // 192.0.2.1 is TEST-NET-1: never an address of this host, and nothing is sent to it.
        #expect {
            _ = try MetricsServer(address: "192.0.2.1:9464", registry: MetricsRegistry(), health: { (true, "") })
        } throws: { ($0 as? HaulError)?.code == .metricsAddrUnavailable }
    }

    @Test func concurrentScrapesWhileCountersMoveStayMonotonic() throws {
        let registry = MetricsRegistry()
        let server = try startServerOnFreePort(registry)
        defer { server.stop() }
        let writers = 3
        let progress = WriterProgress()
        let done = DispatchGroup()
        for writer in 0..<writers {
            done.enter()
            Thread { [registry] in
                let bytes = registry.counter("haul_bytes_fetched_total", help: "Bytes.")
                let retries = registry.counter("haul_segment_retries_total", help: "Retries.", labels: ["reason": "w\(writer % 2)"])
                let latency = registry.histogram("haul_claim_latency_seconds", help: "Latency.", buckets: [0.01, 0.1])
                // Writes until the scrapes are over, bounded in count.
                var steps = 0
                while steps < 50_000_000 && !progress.stop.load(ordering: .relaxed) {
                    bytes.add(1024)
                    retries.increment()
                    latency.observe(Double(steps % 3) * 0.05)
                    steps += 1
                }
                progress.steps.add(steps, ordering: .relaxed)
                done.leave()
            }.start()
        }
        var previous: Double = 0
        for _ in 0..<6 {
            let round = ScrapeRound()
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                let samples = try? parseWithPrometheusClient(curl("http://\(server.address)/metrics").body)
                let bytes = samples?.first { $0.name == "haul_bytes_fetched_total" }?.number ?? -1
                if let samples { checkHistogramIsConsistent(samples) }
                round.values.withLock { $0.append(bytes) }
            }
            let values = round.values.withLock { $0 }
            #expect(values.count == 4)
            #expect(values.allSatisfy { $0 >= previous }, "a counter went down or a scrape failed: \(values) after \(previous)")
            previous = values.max() ?? previous
        }
        progress.stop.store(true, ordering: .relaxed)
        done.wait()
        let total = Double(progress.steps.load(ordering: .relaxed))
        let final = try parseWithPrometheusClient(curl("http://\(server.address)/metrics").body)
        #expect(final.first { $0.name == "haul_bytes_fetched_total" }?.number == total * 1024)
        let retries = final.filter { $0.name == "haul_segment_retries_total" }.compactMap(\.number).reduce(0, +)
        #expect(retries == total)
        #expect(final.first { $0.name == "haul_claim_latency_seconds_count" }?.number == total)
        #expect(previous <= total * 1024)
    }

    /// Cumulative buckets never decrease and `+Inf` equals `_count`, even mid-update.
    private func checkHistogramIsConsistent(_ samples: [ParsedSample]) {
        let buckets = samples.filter { $0.name == "haul_claim_latency_seconds_bucket" }.compactMap(\.number)
        guard !buckets.isEmpty else { return }
        #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(buckets.last == samples.first { $0.name == "haul_claim_latency_seconds_count" }?.number)
    }
}

/// The counter values read by one round of concurrent scrapes.
private final class ScrapeRound: Sendable {
    let values = Mutex<[Double]>([])
}

/// Shared between the writer threads and the test: when to stop, and how much was written.
private final class WriterProgress: Sendable {
    let stop = Atomic<Bool>(false)
    let steps = Atomic<Int>(0)
}
