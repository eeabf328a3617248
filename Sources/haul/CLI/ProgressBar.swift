import Foundation
import HaulCore

/// `haul get`'s and `haul upload`'s progress display: a line redrawn in place on a terminal
/// (fitted to its width), a timestamped log line every few seconds otherwise, with the rate
/// measured over the time since the previous line.
struct ProgressBar {
    private let display: Display
    private var lastBytes: Int64 = 0
    private var lastTime = Date()
    private var rate: Double = 0
    private var lastLine = Date()
    private var bytesAtLastLine: Int64 = 0
    private var drawnLength = 0
    private var lastNote: String?
    private var lastUntil: Date?

    /// Interval between log lines when stderr is not a terminal.
    static let logInterval = 5.0

    /// `terminal`: stderr is a terminal (else log lines).
    init(terminal: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) {
        display = Display(terminal: terminal, environment: environment)
    }

    /// Shows the latest figures. `note` (e.g. `retrying in 4 s: …`) ends the line while it
    /// applies; a new note (another text, or the same one for a later `until`) is written at
    /// once even when the output is not a terminal.
    mutating func update(bytes: Int64, size: Int64?, segments: String, state: String, note: String? = nil, until: Date? = nil) {
        let now = Date()
        let later = until.map { abs($0.timeIntervalSince(lastUntil ?? .distantPast)) > 0.5 } ?? false
        let newNote = note.map { later || Self.reason($0) != lastNote.map(Self.reason) } ?? false
        lastNote = note
        lastUntil = until ?? lastUntil
        let suffix = note.map { "  \($0)" } ?? ""
        guard display.terminal else {
            // A log line carries the average rate since the previous one: never a guess at 0 B/s.
            let elapsed = now.timeIntervalSince(lastLine)
            guard newNote || elapsed >= Self.logInterval, size != nil || bytes > 0 || note != nil else { return }
            let average = Double(max(0, bytes - bytesAtLastLine)) / max(elapsed, 0.001)
            let line = Self.render(bytes: bytes, size: size, rate: average, segments: segments, state: state, width: nil) + suffix
            StandardStream.write(Log.timestamp(now.timeIntervalSince1970) + " " + line + "\n", to: 2)
            lastLine = now
            bytesAtLastLine = bytes
            return
        }
        let elapsed = now.timeIntervalSince(lastTime)
        if elapsed >= 0.5 {
            let instant = Double(max(0, bytes - lastBytes)) / elapsed
            rate = rate == 0 ? instant : rate * 0.6 + instant * 0.4
            lastBytes = bytes
            lastTime = now
        }
        // The note comes first: the figures give way to it on a narrow terminal.
        let width = display.width() - 1
        let figures = Self.render(bytes: bytes, size: size, rate: rate, segments: segments, state: state, width: max(0, width - suffix.count))
        let line = Self.fit(figures + suffix, width)
        if display.dumb {
            // No escape sequences: overwrite the previous line with spaces.
            StandardStream.write("\r" + line + String(repeating: " ", count: max(0, drawnLength - line.count)), to: 2)
        } else {
            StandardStream.write("\r\u{1B}[K" + line, to: 2)
        }
        drawnLength = line.count
    }

    /// A note without its countdown, to tell a new retry from the same one counting down.
    private static func reason(_ note: String) -> Substring {
        note.firstIndex(of: ":").map { note[$0...] } ?? Substring(note)
    }

    /// Ends the bar's line on a terminal.
    func finish() {
        if display.terminal { StandardStream.write("\n", to: 2) }
    }

    /// The bar's text, at most `width` characters when given. Pure, for tests:
    /// `[#####>    ]  45% 1.2 GiB/2.6 GiB 350.0 MiB/s ETA 4s [##>>..]`. What does not fit goes,
    /// in this order: the segment map, the ETA, then the bar shrinks (to nothing at last).
    static func render(bytes: Int64, size: Int64?, rate: Double, segments: String, state: String, width: Int? = nil) -> String {
        let rateText = "\(ByteSize.format(Int64(rate)))/s"
        guard let size, size > 0 else {
            return fit("\(state) \(ByteSize.format(bytes)) \(rateText)", width)
        }
        let fraction = min(1, Double(bytes) / Double(size))
        let percent = String(format: "%3d%%", Int(fraction * 100))
        var eta = ""
        if rate > 0, bytes < size {
            let seconds = Int(Double(size - bytes) / rate)
            eta =
                seconds >= 3600
                ? " ETA \(seconds / 3600)h\(seconds % 3600 / 60)m" : seconds >= 60 ? " ETA \(seconds / 60)m\(seconds % 60)s" : " ETA \(seconds)s"
        }
        let figures = " \(percent) \(ByteSize.format(bytes))/\(ByteSize.format(size)) \(rateText)"
        var map = segments.isEmpty ? "" : " [\(segments)]"
        let limit = width ?? .max
        var barWidth = 30
        if figures.count + eta.count + map.count + barWidth + 2 > limit { map = "" }
        if figures.count + eta.count + barWidth + 2 > limit { eta = "" }
        if figures.count + eta.count + barWidth + 2 > limit { barWidth = max(0, limit - figures.count - 2) }
        guard barWidth >= 5 else { return fit(String(figures.dropFirst()), width) }
        let filled = Int(fraction * Double(barWidth))
        let bar = String(repeating: "#", count: filled) + (filled < barWidth ? ">" + String(repeating: " ", count: barWidth - filled - 1) : "")
        return "[\(bar)]\(figures)\(eta)\(map)"
    }

    private static func fit(_ text: String, _ width: Int?) -> String {
        guard let width, text.count > width else { return text }
        return String(text.prefix(max(0, width)))
    }
}

/// What the terminal on stderr can show: its width, and whether it understands escape
/// sequences (`TERM=dumb` does not). `NO_COLOR` needs nothing: Haul never writes colours.
struct Display {
    let terminal: Bool
    let dumb: Bool
    private let columns: Int?

    init(terminal: Bool, environment: [String: String]) {
        self.terminal = terminal
        dumb = environment["TERM"] == "dumb"
        columns = environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
    }

    /// Columns of the terminal on stderr now (it may be resized), else `COLUMNS`, else 80.
    func width() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return columns ?? 80
    }
}
