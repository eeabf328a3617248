import Foundation
import HaulCore

/// Line charts over a `ChartWindow` (the last hour by default, one value per minute):
/// server-rendered SVG with labelled axes (no script, no style attribute: CSP-clean; colours
/// come from the stylesheet's classes).
enum Chart {
    static let width = 640.0
    static let height = 190.0
    /// The plot area inside the SVG: room on the left for the values and the rotated unit, below
    /// for the minutes.
    static let left = 98.0, right = 628.0, top = 12.0, bottom = 150.0

    /// What the values are, which sets how the y axis is labelled.
    enum Unit: String {
        case bytesPerSecond = "bytes/s"
        case transfers = "transfers"

        func label(_ value: Double) -> String {
            switch self {
            case .bytesPerSecond: "\(ByteSize.format(Int64(value)))/s"
            case .transfers: value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
            }
        }
    }

    /// One line: its name for the legend and its value per minute, oldest first (nil: no sample).
    struct Series {
        let name: String
        let values: [Double?]
    }

    /// The top of the y axis: the smallest of 1, 2 or 5 times a power of ten at or above `peak`
    /// (1 for nothing), counted in the unit `peak` is shown in (KiB, MiB… for bytes, so that
    /// the label is a round 100 MiB/s, not 95.4). The dashboard's script repeats this.
    static func axisTop(_ peak: Double, unit: Unit = .transfers) -> Double {
        guard peak > 0 else { return unit == .transfers ? 2 : 1 }
        let scale = unit == .bytesPerSecond ? pow(1024, floor(log(max(1, peak)) / log(1024))) : 1
        let value = peak / scale
        let magnitude = pow(10, floor(log10(value)))
        return scale * ([1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= value } ?? 10 * magnitude)
    }

    /// The polyline points of `values` against `top` (values past it are clipped).
    static func points(_ values: [Double?], top axisTop: Double) -> String {
        guard values.count > 1 else { return "" }
        return values.enumerated().compactMap { index, value in
            value.map { value in
                let x = left + Double(index) * (right - left) / Double(values.count - 1)
                let y = bottom - min(value, axisTop) / axisTop * (bottom - top)
                return String(format: "%.1f,%.1f", x, y)
            }
        }.joined(separator: " ")
    }

    /// The chart: `series`, one value per point of `window`, axes labelled in `unit` and time
    /// ago, a legend naming the lines when `legend` (or there is more than one). `kind` names it for scripts
    /// and tests (`data-chart-kind`); a one-line chart's polyline is `data-chart="KIND"`.
    static func svg(_ title: String, kind: String, unit: Unit, series: [Series], legend: Bool = false, window: ChartWindow = .standard) -> String {
        let count = series.map(\.values.count).max() ?? 0
        let peak = series.flatMap { $0.values.compactMap { $0 } }.max() ?? 0
        let axisTop = axisTop(peak, unit: unit)
        var parts: [String] = []
        // Y axis: 0, half and the top, with grid lines.
        for fraction in [0.0, 0.5, 1.0] {
            let y = bottom - fraction * (bottom - top)
            parts.append(String(format: "<line class=\"grid\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"></line>", left, y, right, y))
            parts.append(
                String(format: "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\"", left - 6, y + 4)
                    + (fraction == 1 ? " data-axis-top" : fraction == 0.5 ? " data-axis-half" : "") + ">\(e(unit.label(fraction * axisTop)))</text>")
        }
        // X axis: a tick every `window.tick` minutes back from now.
        if count > 1 {
            for ago in stride(from: 0, through: count - 1, by: max(1, window.tick / window.step)) {
                let x = left + Double(count - 1 - ago) * (right - left) / Double(count - 1)
                parts.append(String(format: "<line class=\"tick\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"></line>", x, bottom, x, bottom + 4))
                parts.append(
                    String(format: "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">", x, bottom + 17) + window.label(minutesAgo: ago * window.step)
                        + "</text>")
            }
        }
        parts.append(String(format: "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"></line>", left, top, left, bottom))
        parts.append(String(format: "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"></line>", left, bottom, right, bottom))
        parts.append(
            String(
                format: "<text class=\"axis-title\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", (left + right) / 2, height - 4)
                + "\(window.axisTitle)</text>")
        parts.append(
            String(
                format: "<text class=\"axis-title\" x=\"12\" y=\"%.0f\" text-anchor=\"middle\" transform=\"rotate(-90 12 %.0f)\">", (top + bottom) / 2,
                (top + bottom) / 2)
                + "\(unit.rawValue)</text>")
        for (index, line) in series.enumerated() {
            let attribute = series.count == 1 ? " data-chart=\"\(e(kind))\"" : " data-series=\"\(e(line.name))\""
            parts.append("<polyline class=\"series-\(index % 6)\"\(attribute) points=\"\(points(line.values, top: axisTop))\"></polyline>")
        }
        let legend =
            legend || series.count > 1
            ? "<ul class=\"legend\">"
                + series.enumerated().map { "<li><i class=\"swatch series-\($0.offset % 6)\"></i>\(e($0.element.name))</li>" }.joined() + "</ul>"
            : ""
        return """
            <figure class="chart"><svg viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="\(e(title))" data-chart-kind="\(e(kind))">\
            <g data-axis>\(parts.joined())</g></svg>\(legend)</figure>
            """
    }

    /// The fleet's bytes per second, one point per `window.step` minutes (each sample the
    /// bytes of that many minutes; the overview's live chart), with the peak and the last full
    /// point in words.
    static func throughput(_ samples: [(minute: Int64, bytes: Int64)], window: ChartWindow = .standard) -> String {
        let perSecond = samples.map { Double($0.bytes) / Double(60 * window.step) }
        let peak = perSecond.max() ?? 0
        let latest = perSecond.dropLast().last ?? 0
        let last = window.step == 1 ? "last full minute" : "last full \(window.step) minutes"
        return svg(
            "bytes per second over the \(window.title)", kind: "throughput", unit: .bytesPerSecond, series: [Series(name: "fleet", values: perSecond)],
            window: window
        )
        .replacingOccurrences(of: "</figure>", with: "") + """
            <figcaption>peak <span data-chart-peak>\(ByteSize.format(Int64(peak)))/s</span> · \(last) \
            <span data-chart-last>\(ByteSize.format(Int64(latest)))/s</span> · \(window.title)</figcaption></figure>
            """
    }

    /// Bytes per second of each named line (per worker, per origin), each value the bytes of
    /// one point of `window`.
    static func throughputBy(_ title: String, kind: String, _ lines: [(name: String, bytes: [Int64])], window: ChartWindow = .standard) -> String {
        // Nothing received: the axes all the same, over a line at 0, and says so.
        guard !lines.isEmpty else {
            return svg(
                title, kind: kind, unit: .bytesPerSecond, series: [Series(name: "none", values: Array(repeating: 0, count: window.points))], window: window)
                + "<p class=\"muted\">Nothing received in the \(window.title).</p>"
        }
        return svg(
            title, kind: kind, unit: .bytesPerSecond,
            series: lines.map { Series(name: $0.name, values: $0.bytes.map { Double($0) / Double(60 * window.step) }) }, legend: true, window: window)
    }

    /// Pending and downloading transfers over `window`.
    static func queue(_ samples: [(minute: Int64, pending: Int64?, downloading: Int64?, segmentsQueued: Int64?)], window: ChartWindow = .standard) -> String {
        svg(
            "transfers pending and downloading over the \(window.title)", kind: "queue", unit: .transfers,
            series: [
                Series(name: "pending", values: samples.map { $0.pending.map(Double.init) }),
                Series(name: "downloading", values: samples.map { $0.downloading.map(Double.init) }),
            ], window: window)
    }
}
