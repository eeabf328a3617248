import Synchronization

/// The metrics of one process, and their rendering for a `/metrics` scrape.
///
/// Register each series once (typically at startup) and keep the returned handle; asking
/// again for the same name and labels returns a handle to the same series. Every method is
/// safe from any thread, including libmicrohttpd's threads that call `render()`.
///
/// Names and label names must follow the Prometheus data model; breaking it, or registering
/// one name as two kinds (or a histogram with other buckets), is a programming error that
/// stops the process.
public final class MetricsRegistry: Sendable {
    private struct Family {
        var name: String
        var help: String
        var kind: MetricFamily.Kind
        var buckets: [Double]
        var series: [SeriesEntry] = []
        var seriesIndex: [[MetricFamily.Label]: Int] = [:]
    }

    private struct SeriesEntry {
        var labels: [MetricFamily.Label]
        var cell: Cell
    }

    private enum Cell {
        case scalar(ScalarCell)
        case histogram(HistogramCell)
    }

    private struct State {
        var families: [Family] = []
        var index: [String: Int] = [:]
    }

    /// Families in registration order. Lock order: this lock, then never a cell's lock
    /// (snapshots copy the cells out first), so handle updates never wait on a scrape.
    private let state = Mutex(State())

    /// The buckets other Prometheus clients use by default, in seconds: 5 ms to 10 s.
    public static let defaultBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// Creates an empty registry.
    public init() {}

    /// The counter `name` with these labels, created at zero on first use.
    ///
    /// By convention the name ends in `_total` (`haul_bytes_fetched_total`). `help` is kept
    /// from the first registration of the name.
    public func counter(_ name: String, help: String, labels: [String: String] = [:]) -> Counter {
        guard case .scalar(let cell) = register(name, help: help, kind: .counter, labels: labels, buckets: []) else {
            preconditionFailure("unreachable: counter \(name) has no scalar cell")
        }
        return Counter(cell: cell)
    }

    /// The gauge `name` with these labels, created at zero on first use.
    public func gauge(_ name: String, help: String, labels: [String: String] = [:]) -> Gauge {
        guard case .scalar(let cell) = register(name, help: help, kind: .gauge, labels: labels, buckets: []) else {
            preconditionFailure("unreachable: gauge \(name) has no scalar cell")
        }
        return Gauge(cell: cell)
    }

    /// The histogram `name` with these labels, created empty on first use.
    ///
    /// `buckets` are the finite upper bounds, strictly increasing; `+Inf` is added for you.
    /// Every series of one name must use the same buckets. Labels may not include `le`.
    public func histogram(
        _ name: String, help: String, labels: [String: String] = [:], buckets: [Double] = MetricsRegistry.defaultBuckets
    ) -> Histogram {
        precondition(!buckets.isEmpty, "histogram \(name) needs at least one bucket")
        precondition(buckets.allSatisfy(\.isFinite), "histogram \(name): buckets must be finite (+Inf is implicit)")
        precondition(zip(buckets, buckets.dropFirst()).allSatisfy { $0 < $1 }, "histogram \(name): buckets must increase")
        precondition(labels["le"] == nil, "histogram \(name): the label name 'le' is reserved")
        guard case .histogram(let cell) = register(name, help: help, kind: .histogram, labels: labels, buckets: buckets) else {
            preconditionFailure("unreachable: histogram \(name) has no histogram cell")
        }
        return Histogram(cell: cell)
    }

    /// Every registered series in Prometheus text format 0.0.4, ready to serve with
    /// `ExpositionFormat.contentType`.
    public func render() -> String {
        ExpositionFormat.render(snapshot())
    }

    /// A copy of every family and series; each series is read under its own lock, so a
    /// histogram's buckets, sum and count agree with each other.
    func snapshot() -> [MetricFamily] {
        let families = state.withLock { $0.families }
        return families.map { family in
            let series = family.series.map { entry -> MetricFamily.Series in
                switch entry.cell {
                case .scalar(let cell):
                    return .init(labels: entry.labels, value: .scalar(cell.value))
                case .histogram(let cell):
                    let state = cell.state.withLock { $0 }
                    return .init(labels: entry.labels, value: .histogram(upperBounds: cell.upperBounds, counts: state.counts, sum: state.sum))
                }
            }
            return MetricFamily(name: family.name, help: family.help, kind: family.kind, series: series)
        }
    }

    private func register(_ name: String, help: String, kind: MetricFamily.Kind, labels: [String: String], buckets: [Double]) -> Cell {
        precondition(MetricNames.isValidMetricName(name), "'\(name)' is not a valid Prometheus metric name")
        for labelName in labels.keys {
            precondition(MetricNames.isValidLabelName(labelName), "metric \(name): '\(labelName)' is not a valid label name")
        }
        let key = labels.sorted { $0.key < $1.key }.map { MetricFamily.Label(name: $0.key, value: $0.value) }
        return state.withLock { state in
            let familyIndex: Int
            if let existing = state.index[name] {
                let family = state.families[existing]
                precondition(family.kind == kind, "metric \(name) is already registered as a \(family.kind.rawValue), not a \(kind.rawValue)")
                precondition(family.buckets == buckets, "histogram \(name) is already registered with buckets \(family.buckets)")
                familyIndex = existing
            } else {
                familyIndex = state.families.count
                state.families.append(Family(name: name, help: help, kind: kind, buckets: buckets))
                state.index[name] = familyIndex
            }
            if let seriesIndex = state.families[familyIndex].seriesIndex[key] {
                return state.families[familyIndex].series[seriesIndex].cell
            }
            let cell: Cell = kind == .histogram ? .histogram(HistogramCell(upperBounds: buckets)) : .scalar(ScalarCell())
            state.families[familyIndex].seriesIndex[key] = state.families[familyIndex].series.count
            state.families[familyIndex].series.append(SeriesEntry(labels: key, cell: cell))
            return cell
        }
    }
}
