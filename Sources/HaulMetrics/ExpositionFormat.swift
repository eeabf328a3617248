/// Prometheus text exposition format, version 0.0.4: pure functions from snapshots to text.
///
/// See https://prometheus.io/docs/instrumenting/exposition_formats/ for the grammar.
public enum ExpositionFormat {
    /// The `Content-Type` of a `/metrics` response in this format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Renders families in the given order, each as `# HELP`, `# TYPE` and its samples; every
    /// line ends with a newline and an empty list renders as the empty string.
    static func render(_ families: [MetricFamily]) -> String {
        var out = ""
        for family in families {
            out += "# HELP \(family.name) \(escapeHelp(family.help))\n"
            out += "# TYPE \(family.name) \(family.kind.rawValue)\n"
            for series in family.series {
                switch series.value {
                case .scalar(let value):
                    out += sampleLine(family.name, series.labels, value)
                case .histogram(let upperBounds, let counts, let sum):
                    var cumulative: UInt64 = 0
                    for (index, bound) in upperBounds.enumerated() {
                        cumulative &+= counts[index]
                        let le = MetricFamily.Label(name: "le", value: formatValue(bound))
                        out += sampleLine(family.name + "_bucket", series.labels + [le], Double(cumulative))
                    }
                    cumulative &+= counts[upperBounds.count]
                    let inf = MetricFamily.Label(name: "le", value: "+Inf")
                    out += sampleLine(family.name + "_bucket", series.labels + [inf], Double(cumulative))
                    out += sampleLine(family.name + "_sum", series.labels, sum)
                    out += sampleLine(family.name + "_count", series.labels, Double(cumulative))
                }
            }
        }
        return out
    }

    /// `name{a="1",b="2"} value\n`, or `name value\n` without labels.
    static func sampleLine(_ name: String, _ labels: [MetricFamily.Label], _ value: Double) -> String {
        guard !labels.isEmpty else { return "\(name) \(formatValue(value))\n" }
        let pairs = labels.map { "\($0.name)=\"\(escapeLabelValue($0.value))\"" }.joined(separator: ",")
        return "\(name){\(pairs)} \(formatValue(value))\n"
    }

    /// Escapes `\`, `"` and newline in a label value as `\\`, `\"` and `\n`.
    static func escapeLabelValue(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Escapes `\` and newline in a HELP text as `\\` and `\n` (quotes stay as they are).
    static func escapeHelp(_ help: String) -> String {
        var out = ""
        out.reserveCapacity(help.utf8.count)
        for scalar in help.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A float as Go's `ParseFloat` and Python's `float` read it: `+Inf`, `-Inf`, `NaN`, whole
    /// numbers below 2^53 without a fraction (`42`), anything else in shortest round-trip form.
    static func formatValue(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Inf" : "+Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return value.description
    }
}
