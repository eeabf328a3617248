import Synchronization

/// A monotonically increasing count, such as bytes fetched or retries; returned by
/// `MetricsRegistry.counter(_:help:labels:)`.
///
/// Cheap to copy and safe to use from any thread: every copy updates the same series.
public struct Counter: Sendable {
    let cell: ScalarCell

    /// Adds `amount`, which must be zero or more (a counter never goes down).
    public func add(_ amount: Double) {
        precondition(amount >= 0, "a counter cannot decrease (add(\(amount)))")
        cell.value.withLock { $0 += amount }
    }

    /// Adds `amount`, which must be zero or more.
    public func add(_ amount: Int) {
        add(Double(amount))
    }

    /// Adds one.
    public func increment() {
        add(1.0)
    }

    /// The current total.
    public var value: Double { cell.value.withLock { $0 } }
}

/// A value that goes up and down, such as queue depth; returned by
/// `MetricsRegistry.gauge(_:help:labels:)`. Safe to use from any thread.
public struct Gauge: Sendable {
    let cell: ScalarCell

    /// Replaces the value.
    public func set(_ value: Double) {
        cell.value.withLock { $0 = value }
    }

    /// Replaces the value.
    public func set(_ value: Int) {
        set(Double(value))
    }

    /// Adds `delta`, which may be negative.
    public func add(_ delta: Double) {
        cell.value.withLock { $0 += delta }
    }

    /// The current value.
    public var value: Double { cell.value.withLock { $0 } }
}

/// Observations counted into fixed buckets, such as claim latency in seconds; returned by
/// `MetricsRegistry.histogram(_:help:labels:buckets:)`. Safe to use from any thread.
public struct Histogram: Sendable {
    let cell: HistogramCell

    /// Records one observation, in the unit the metric's name says (seconds, bytes).
    ///
    /// It lands in the first bucket whose upper bound is at least `value` (bounds are
    /// inclusive); a NaN counts only in `+Inf` and makes the sum NaN, as in other clients.
    public func observe(_ value: Double) {
        let bounds = cell.upperBounds
        var index = bounds.count
        var low = 0
        var high = bounds.count
        while low < high {
            let mid = (low + high) / 2
            if value <= bounds[mid] { high = mid } else { low = mid + 1 }
        }
        if !value.isNaN { index = low }
        cell.state.withLock { state in
            state.counts[index] &+= 1
            state.sum += value
        }
    }

    /// Records the seconds elapsed in `duration`.
    public func observe(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        observe(Double(seconds) + Double(attoseconds) / 1e18)
    }
}

/// The storage of one counter or gauge series; its own `Mutex` guards the value.
final class ScalarCell: Sendable {
    let value = Mutex<Double>(0)
}

/// The storage of one histogram series: fixed bounds, and counts and sum under one `Mutex`
/// so that a scrape sees `_count` equal to the `+Inf` bucket.
final class HistogramCell: Sendable {
    struct State {
        var counts: [UInt64]
        var sum: Double
    }

    let upperBounds: [Double]
    let state: Mutex<State>

    init(upperBounds: [Double]) {
        self.upperBounds = upperBounds
        state = Mutex(State(counts: Array(repeating: 0, count: upperBounds.count + 1), sum: 0))
    }
}
