import Foundation
import HaulTestSupport
import Testing

@testable import HaulMetrics

@Suite struct MetricsRegistryTests {
    @Test func sameNameAndLabelsShareOneSeries() {
        let registry = MetricsRegistry()
        registry.counter("haul_segment_retries_total", help: "Retries.", labels: ["reason": "stalled"]).add(2)
        registry.counter("haul_segment_retries_total", help: "ignored", labels: ["reason": "stalled"]).increment()
        registry.counter("haul_segment_retries_total", help: "Retries.", labels: ["reason": "reset"]).add(1.5)
        #expect(
            registry.render() == """
                # HELP haul_segment_retries_total Retries.
                # TYPE haul_segment_retries_total counter
                haul_segment_retries_total{reason="stalled"} 3
                haul_segment_retries_total{reason="reset"} 1.5

                """)
    }

    @Test func labelsRenderSortedByName() {
        let registry = MetricsRegistry()
        registry.gauge("g", help: "G.", labels: ["zone": "b", "app": "haul", "m": "x\"y"]).set(4)
        #expect(registry.render().contains("g{app=\"haul\",m=\"x\\\"y\",zone=\"b\"} 4\n"))
    }

    @Test func gaugeSetAndAdd() {
        let registry = MetricsRegistry()
        let depth = registry.gauge("haul_queue_depth", help: "Queued segments.")
        depth.set(10)
        depth.add(-3)
        depth.add(0.5)
        #expect(depth.value == 7.5)
        depth.set(2)
        #expect(registry.render().hasSuffix("haul_queue_depth 2\n"))
    }

    @Test func histogramBoundsAreInclusiveAndCumulative() throws {
        let registry = MetricsRegistry()
        let latency = registry.histogram("haul_claim_latency_seconds", help: "Claim latency.", buckets: [0.01, 0.1, 1])
        for value in [0.0, 0.01, 0.010001, 0.1, 0.5, 1, 1.0000001, 30, -1] { latency.observe(value) }
        latency.observe(Duration.milliseconds(250))
        let family = try #require(registry.snapshot().first)
        guard case .histogram(let bounds, let counts, let sum) = family.series[0].value else {
            Issue.record("not a histogram")
            return
        }
        #expect(bounds == [0.01, 0.1, 1])
        #expect(counts == [3, 2, 3, 2])
        #expect(abs(sum - 31.8700011) < 1e-9)
        let text = registry.render()
        #expect(text.contains("haul_claim_latency_seconds_bucket{le=\"0.01\"} 3\n"))
        #expect(text.contains("haul_claim_latency_seconds_bucket{le=\"0.1\"} 5\n"))
        #expect(text.contains("haul_claim_latency_seconds_bucket{le=\"1\"} 8\n"))
        #expect(text.contains("haul_claim_latency_seconds_bucket{le=\"+Inf\"} 10\n"))
        #expect(text.contains("haul_claim_latency_seconds_count 10\n"))
    }

    @Test func nanObservationCountsOnlyInInf() throws {
        let registry = MetricsRegistry()
        registry.histogram("h", help: "H.", buckets: [1]).observe(.nan)
        let family = try #require(registry.snapshot().first)
        guard case .histogram(_, let counts, let sum) = family.series[0].value else { return }
        #expect(counts == [0, 1])
        #expect(sum.isNaN)
    }

    @Test func familiesRenderInRegistrationOrder() {
        let registry = MetricsRegistry()
        _ = registry.gauge("zz", help: "Z.")
        _ = registry.counter("aa_total", help: "A.")
        #expect(registry.render().hasPrefix("# HELP zz Z.\n"))
    }

    @Test func updatesFromManyThreadsAreAllCounted() {
        let registry = MetricsRegistry()
        let threads = 8
        let perThread = 5_000
        DispatchQueue.concurrentPerform(iterations: threads) { index in
            let counter = registry.counter("c_total", help: "C.", labels: ["kind": "shared"])
            let histogram = registry.histogram("h", help: "H.", buckets: [0.5])
            let gauge = registry.gauge("g", help: "G.")
            for step in 0..<perThread {
                counter.increment()
                gauge.add(index.isMultiple(of: 2) ? 3 : -1)
                histogram.observe(step.isMultiple(of: 2) ? 0.25 : 0.75)
                if step.isMultiple(of: 500) { _ = registry.render() }
            }
        }
        let text = registry.render()
        #expect(text.contains("c_total{kind=\"shared\"} 40000\n"))
        #expect(text.contains("h_bucket{le=\"0.5\"} 20000\n"))
        #expect(text.contains("h_count 40000\n"))
        #expect(text.contains("h_sum 20000\n"))
        // Half the threads add 3, half take 1, each 5000 times: nothing is lost between them.
        #expect(text.contains("g 40000\n"))
    }

    @Test func negativeCounterIncrementStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            MetricsRegistry().counter("c_total", help: "C.").add(-1)
        }
    }

    @Test func oneNameCannotBeTwoKinds() async {
        await #expect(processExitsWith: .failure) {
            let registry = MetricsRegistry()
            _ = registry.counter("haul_x", help: "X.")
            _ = registry.gauge("haul_x", help: "X.")
        }
    }

    @Test func invalidNamesStopTheProcess() async {
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("9lives", help: "") }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("g", help: "", labels: ["__name": "x"]) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("h", help: "", buckets: [1, 1]) }
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("h", help: "", labels: ["le": "1"]) }
    }

    @Test(arguments: [
        ("haul_bytes_total", true), ("a:b_c", true), ("_x", true), (":x", true), ("A1", true),
        ("", false), ("1a", false), ("a-b", false), ("a b", false), ("ä", false),
    ])
    func metricNameRules(name: String, valid: Bool) {
        #expect(MetricNames.isValidMetricName(name) == valid)
    }

    @Test(arguments: [
        ("reason", true), ("_r", true), ("r2", true), ("__r", false), ("a:b", false), ("", false), ("2r", false),
    ])
    func labelNameRules(name: String, valid: Bool) {
        #expect(MetricNames.isValidLabelName(name) == valid)
    }
}
