/// A point-in-time copy of one metric family, the input of `ExpositionFormat.render`.
///
/// Built by `MetricsRegistry.snapshot()`; a value type so that rendering is a pure function
/// that tests can feed directly.
struct MetricFamily: Equatable, Sendable {
    enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// One labelled series of the family.
    struct Series: Equatable, Sendable {
        /// Label pairs in the order they are rendered (sorted by name in the registry).
        var labels: [Label]
        var value: Value
    }

    struct Label: Hashable, Sendable {
        var name: String
        var value: String
    }

    enum Value: Equatable, Sendable {
        /// A counter's or gauge's current value.
        case scalar(Double)
        /// `counts[i]` observations fell in `(upperBounds[i-1], upperBounds[i]]`; the last
        /// element, at `upperBounds.count`, counts the ones above every bound (`+Inf`).
        case histogram(upperBounds: [Double], counts: [UInt64], sum: Double)
    }

    var name: String
    var help: String
    var kind: Kind
    var series: [Series]
}

/// The naming rules of the Prometheus data model.
enum MetricNames {
    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    static func isValidMetricName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetter(first) || first == UInt8(ascii: "_") || first == UInt8(ascii: ":") else {
            return false
        }
        return name.utf8.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":") }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with the reserved `__`.
    static func isValidLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetter(first) || first == UInt8(ascii: "_"), !name.hasPrefix("__") else {
            return false
        }
        return name.utf8.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
