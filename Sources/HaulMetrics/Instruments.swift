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
        cell.add(amount)
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
    public var value: Double { cell.value }
}

/// A value that goes up and down, such as queue depth; returned by
/// `MetricsRegistry.gauge(_:help:labels:)`. Safe to use from any thread.
public struct Gauge: Sendable {
    let cell: ScalarCell

    /// Replaces the value.
    public func set(_ value: Double) {
        cell.set(value)
    }

    /// Replaces the value.
    public func set(_ value: Int) {
        set(Double(value))
    }

    /// Adds `delta`, which may be negative.
    public func add(_ delta: Double) {
        cell.add(delta)
    }

    /// The current value.
    public var value: Double { cell.value }
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

/// The storage of one counter or gauge series: the value's bits in one atomic word, because
/// counters such as bytes fetched are added to for every chunk from every lane, and a contended
/// `Mutex` (a priority-inheritance futex on Linux) sends each waiter through the kernel: with
/// eight connections that cost more than the download itself.
final class ScalarCell: Sendable {
    private let bits = Atomic<UInt64>(Double(0).bitPattern)

    var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }

    func set(_ value: Double) {
        bits.store(value.bitPattern, ordering: .relaxed)
    }

    func add(_ delta: Double) {
        var seen = bits.load(ordering: .relaxed)
        while true {
            let (exchanged, original) = bits.compareExchange(
                expected: seen, desired: (Double(bitPattern: seen) + delta).bitPattern, ordering: .relaxed)
            if exchanged { return }
            seen = original
        }
    }
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
