/// How far back the charts look (`?window=15m|1h|6h|24h`, default 1h), and how many minutes
/// each point of a chart adds up, so that every window draws at most 72 points.
struct ChartWindow: Equatable, Sendable {
    /// The value of `window=`.
    let name: String
    let minutes: Int
    /// Minutes per point.
    let step: Int
    /// Minutes between two labelled ticks of the x axis.
    let tick: Int
    /// Says the window in a heading: "last hour".
    let title: String

    static let all = [
        ChartWindow(name: "15m", minutes: 15, step: 1, tick: 5, title: "last 15 minutes"),
        ChartWindow(name: "1h", minutes: 60, step: 1, tick: 15, title: "last hour"),
        ChartWindow(name: "6h", minutes: 360, step: 5, tick: 60, title: "last 6 hours"),
        ChartWindow(name: "24h", minutes: 1440, step: 20, tick: 360, title: "last 24 hours"),
    ]
    static let standard = all[1]

    /// The window `text` names; the standard hour for nothing or anything else.
    static func named(_ text: String?) -> ChartWindow {
        all.first { $0.name == text } ?? standard
    }

    /// Points of a chart over this window.
    var points: Int { minutes / step }

    /// A tick's label: `now`, `−15 min`, `−6 h`.
    func label(minutesAgo: Int) -> String {
        if minutesAgo == 0 { return "now" }
        return minutesAgo % 60 == 0 && minutesAgo >= 60 ? "−\(minutesAgo / 60) h" : "−\(minutesAgo) min"
    }

    /// The x axis's title.
    var axisTitle: String {
        step == 1 ? "minutes ago (1 point a minute)" : "time ago (1 point per \(step) minutes)"
    }

    /// Per-minute values (oldest first, as `FleetView` reads them) as one value per point:
    /// each run of `step` minutes, oldest first, combined by `combine`.
    func points<T>(_ minutes: [T], _ combine: (ArraySlice<T>) -> T) -> [T] {
        stride(from: 0, to: minutes.count, by: step).map { combine(minutes[$0..<min(minutes.count, $0 + step)]) }
    }
}
