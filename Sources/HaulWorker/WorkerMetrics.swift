import Foundation
import HaulMetrics
import Synchronization

/// The series a worker exposes on `--metrics-addr` (Prometheus text format), and its health.
final class WorkerMetrics: Sendable {
    let registry = MetricsRegistry()
    let bytesFetched: Counter
    let segmentsCompleted: Counter
    /// Segments whose rest a lane gave back to another origin's waiting work (`FairShare`).
    let segmentsYielded: Counter
    let claimLatency: Histogram
    let queueDepth: Gauge
    /// When the database last answered, and when a statement last found it unreachable
    /// (Unix milliseconds; 0: never), with what it said.
    private let lastDatabaseContact = Atomic<Int64>(WorkerMetrics.now())
    private let lastDatabaseLoss = Atomic<Int64>(0)
    private let lossReason = Mutex<String>("")
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
        segmentsYielded = registry.counter(
            "haul_segments_yielded_total", help: "Segments whose rest this worker gave back, bytes kept, to another origin's waiting work.")
        claimLatency = registry.histogram("haul_claim_latency_seconds", help: "Time of one segment claim statement, in seconds.")
        queueDepth = registry.gauge("haul_queue_depth", help: "Claimable segments in the cluster (queued and due).")
    }

    /// Counts a failed segment attempt by the error's code (`stalled`, `origin-status`…).
    func retried(reason: String) {
        registry.counter("haul_segment_retries_total", help: "Failed segment attempts, by reason.", labels: ["reason": reason]).increment()
    }

    /// Counts a failed attempt on one of a transfer's mirrors, by whether it demoted the mirror.
    func mirrorFailed(demoted: Bool) {
        registry.counter(
            "haul_mirror_failures_total", help: "Failed segment attempts on mirrors, by whether the failure took the mirror out of the rotation.",
            labels: ["demoted": demoted ? "true" : "false"]
        ).increment()
    }

    /// Sets the cluster's segment counts by state.
    func segments(_ counts: [String: Int]) {
        for state in ["queued", "running", "done", "failed"] {
            registry.gauge("haul_segments", help: "Segments in the cluster, by state.", labels: ["state": state]).set(counts[state] ?? 0)
        }
    }

    /// Notes that the database answered just now.
    func databaseAnswered() {
        lastDatabaseContact.store(Self.now(), ordering: .relaxed)
    }

    /// Notes that a statement just found the database unreachable (the connection broke or
    /// could not be opened), saying `reason`.
    func databaseLost(_ reason: String) {
        lossReason.withLock { $0 = reason }
        lastDatabaseLoss.store(Self.now(), ordering: .relaxed)
    }

    /// Healthy while the database answered within `window` seconds and the last statement to
    /// meet it did not find it unreachable: a lost database shows at the next statement (a lane
    /// polls every `--poll-interval`), not only once the window has passed.
    func health(window: Double) -> (ok: Bool, reason: String) {
        let contact = lastDatabaseContact.load(ordering: .relaxed)
        let silent = Double(Self.now() - contact) / 1000
        if lastDatabaseLoss.load(ordering: .relaxed) > contact {
            let reason = lossReason.withLock { $0 }.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            return (false, "database unreachable, no answer for \(Int(silent))s: \(reason)")
        }
        return silent <= window ? (true, "ok") : (false, "no answer from the database for \(Int(silent))s")
    }

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
