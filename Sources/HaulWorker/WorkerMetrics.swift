import Foundation
import HaulMetrics
import Synchronization

/// The series a worker exposes on `--metrics-addr` (Prometheus text format), and its health.
final class WorkerMetrics: Sendable {
    let registry = MetricsRegistry()
    let bytesFetched: Counter
    let segmentsCompleted: Counter
    let claimLatency: Histogram
    let queueDepth: Gauge
    private let lastDatabaseContact = Atomic<Int64>(Int64(Date().timeIntervalSince1970))
    private let served = Atomic<Bool>(false)

    /// Whether `/metrics` is served: only then does the housekeeper sample the cluster's queue
    /// for the gauges (a query over every active transfer's segments, on every heartbeat).
    var isServed: Bool {
        get { served.load(ordering: .relaxed) }
        set { served.store(newValue, ordering: .relaxed) }
    }

    init() {
        bytesFetched = registry.counter("haul_bytes_fetched_total", help: "Body bytes received from origins by this worker.")
        segmentsCompleted = registry.counter("haul_segments_completed_total", help: "Segments this worker completed.")
        claimLatency = registry.histogram("haul_claim_latency_seconds", help: "Time of one segment claim statement, in seconds.")
        queueDepth = registry.gauge("haul_queue_depth", help: "Claimable segments in the cluster (queued and due).")
    }

    /// Counts a failed segment attempt by the error's code (`stalled`, `origin-status`…).
    func retried(reason: String) {
        registry.counter("haul_segment_retries_total", help: "Failed segment attempts, by reason.", labels: ["reason": reason]).increment()
    }

    /// Sets the cluster's segment counts by state.
    func segments(_ counts: [String: Int]) {
        for state in ["queued", "running", "done", "failed"] {
            registry.gauge("haul_segments", help: "Segments in the cluster, by state.", labels: ["state": state]).set(counts[state] ?? 0)
        }
    }

    /// Notes that the database answered just now.
    func databaseAnswered() {
        lastDatabaseContact.store(Int64(Date().timeIntervalSince1970), ordering: .relaxed)
    }

    /// Healthy while the database answered within `window` seconds.
    func health(window: Double) -> (ok: Bool, reason: String) {
        let silent = Date().timeIntervalSince1970 - Double(lastDatabaseContact.load(ordering: .relaxed))
        return silent <= window ? (true, "ok") : (false, "no answer from the database for \(Int(silent))s")
    }
}
