import Foundation
import HaulCore

/// `haul get`'s progress display: a redrawn bar on a terminal, a log line every few seconds
/// otherwise. The rate is smoothed over recent samples.
struct ProgressBar {
    private let terminal: Bool
    private var lastBytes: Int64 = 0
    private var lastTime = Date()
    private var rate: Double = 0
    private var lastLine = Date.distantPast
    private var lastNote: String?
    private var lastUntil: Date?

    init(terminal: Bool) {
        self.terminal = terminal
    }

    /// Shows the latest figures.
    /// `note` (e.g. `retrying in 4 s: …`) ends the line while it applies; a new note (another
    /// text, or the same one for a later `until`) is written at once even when the output is
    /// not a terminal.
    mutating func update(bytes: Int64, size: Int64?, segments: String, state: String, note: String? = nil, until: Date? = nil) {
        let now = Date()
        let elapsed = now.timeIntervalSince(lastTime)
        if elapsed >= 0.5 {
            let instant = Double(max(0, bytes - lastBytes)) / elapsed
            rate = rate == 0 ? instant : rate * 0.6 + instant * 0.4
            lastBytes = bytes
            lastTime = now
        }
        let line = Self.render(bytes: bytes, size: size, rate: rate, segments: segments, state: state) + (note.map { "  \($0)" } ?? "")
        let later = until.map { abs($0.timeIntervalSince(lastUntil ?? .distantPast)) > 0.5 } ?? false
        let newNote = note.map { later || Self.reason($0) != lastNote.map(Self.reason) } ?? false
        lastNote = note
        lastUntil = until ?? lastUntil
        if terminal {
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        } else if newNote || now.timeIntervalSince(lastLine) >= 5, size != nil || bytes > 0 || note != nil {
            lastLine = now
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// A note without its countdown, to tell a new retry from the same one counting down.
    private static func reason(_ note: String) -> Substring {
        note.firstIndex(of: ":").map { note[$0...] } ?? Substring(note)
    }

    /// Ends the bar's line on a terminal.
    func finish() {
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    /// The bar's text. Pure, for tests: `[#####>    ]  45% 1.2 GiB/2.6 GiB 350.0 MiB/s ETA 4s [##>>..]`.
    static func render(bytes: Int64, size: Int64?, rate: Double, segments: String, state: String) -> String {
        let rateText = "\(ByteSize.format(Int64(rate)))/s"
        guard let size, size > 0 else {
            return "\(state) \(ByteSize.format(bytes)) \(rateText)"
        }
        let fraction = min(1, Double(bytes) / Double(size))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + (filled < width ? ">" + String(repeating: " ", count: width - filled - 1) : "")
        let percent = String(format: "%3d%%", Int(fraction * 100))
        var eta = ""
        if rate > 0, bytes < size {
            let seconds = Int(Double(size - bytes) / rate)
            eta =
                seconds >= 3600
                ? " ETA \(seconds / 3600)h\(seconds % 3600 / 60)m" : seconds >= 60 ? " ETA \(seconds / 60)m\(seconds % 60)s" : " ETA \(seconds)s"
        }
        let map = segments.isEmpty ? "" : " [\(segments)]"
        return "[\(bar)] \(percent) \(ByteSize.format(bytes))/\(ByteSize.format(size)) \(rateText)\(eta)\(map)"
    }
}
