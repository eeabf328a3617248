import Foundation
import Synchronization

/// Haul's log: one line per event on standard error, as text or JSON, with context fields
/// (`transfer=12 segment=3`). Safe to call from any thread. Never pass secrets in fields.
public enum Log {
    /// How lines are written.
    public enum Format: String, Sendable {
        case text, json
    }

    /// Severity of a line.
    public enum Level: String, Sendable {
        case debug, info, warning, error
    }

    private static let settings = Mutex<(format: Format, minimum: Level, quiet: Bool)>((.text, .info, false))

    /// Chooses the output format, the lowest level printed (`minimum`, else debug when
    /// `verbose`, else info), and whether to print nothing at all.
    public static func configure(format: Format = .text, verbose: Bool = false, quiet: Bool = false, minimum: Level? = nil) {
        settings.withLock { $0 = (format, minimum ?? (verbose ? .debug : .info), quiet) }
    }

    /// Writes one line. The message and field values go through `SafeText.cleanLine`, so text
    /// an origin chose (names, reasons) cannot forge a line or reorder it with bidi controls.
    public static func write(_ level: Level, _ message: String, _ fields: [(String, String)] = []) {
        let (format, minimum, quiet) = settings.withLock { $0 }
        guard !quiet, rank(level) >= rank(minimum) else { return }
        let message = SafeText.cleanLine(message)
        let fields = fields.map { ($0.0, SafeText.cleanLine($0.1)) }
        let time = timestamp(Date().timeIntervalSince1970)
        let line: String
        switch format {
        case .text:
            let context = fields.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
            line = "\(time) \(level.rawValue.uppercased()) \(message)\(context.isEmpty ? "" : " " + context)\n"
        case .json:
            var object: [String: Any] = ["time": time, "level": level.rawValue, "msg": message]
            for (key, value) in fields { object[key] = jsonValue(key, value) }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            line = String(decoding: data, as: UTF8.self) + "\n"
        }
        StandardStream.write(line, to: 2)
    }

    /// Fields that hold names, never quantities, even when they look like numbers (`dest=2024`).
    private static let textFields: Set<String> = ["id", "dest", "url", "host", "path", "file", "folder", "etag", "target", "database", "storage", "error"]

    /// A field for a JSON line: a number when it is a count, id or size written in digits
    /// (`transfer`, `segment`, `bytes`), a string otherwise.
    static func jsonValue(_ key: String, _ value: String) -> Any {
        guard !textFields.contains(key), let first = value.first, first.isNumber || first == "-",
            value.allSatisfy({ $0.isASCIIDigit || $0 == "." || $0 == "-" }), let number = Double(value), number.isFinite
        else { return value }
        if let whole = Int64(value) { return whole }
        return number
    }

    /// `2026-11-30T02:52:50.278Z`: a time in seconds since 1970 as UTC with milliseconds
    /// (ISO 8601; `gmtime_r` rather than a date formatter, which costs more than the line).
    public static func timestamp(_ seconds: Double) -> String {
        let milliseconds = Int64((seconds * 1000).rounded())
        var clock = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&clock, &parts)
        func padded(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let millis = Int32(milliseconds % 1000)
        return "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2))"
            + "T\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2)).\(padded(millis, 3))Z"
    }

    /// Informational line.
    public static func info(_ message: String, _ fields: [(String, String)] = []) { write(.info, message, fields) }
    /// Something went wrong but Haul carries on.
    public static func warning(_ message: String, _ fields: [(String, String)] = []) { write(.warning, message, fields) }
    /// Something failed.
    public static func error(_ message: String, _ fields: [(String, String)] = []) { write(.error, message, fields) }
    /// Detail for `--verbose`.
    public static func debug(_ message: String, _ fields: [(String, String)] = []) { write(.debug, message, fields) }

    private static func rank(_ level: Level) -> Int {
        switch level {
        case .debug: return 0
        case .info: return 1
        case .warning: return 2
        case .error: return 3
        }
    }
}
