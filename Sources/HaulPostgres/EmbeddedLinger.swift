import Foundation
import HaulCore

/// The embedded server's linger: when the last `haul` using it ends, the server keeps running
/// for `HAUL_EMBEDDED_LINGER` (default 30 s; `0` or `off` stops it at once), so that the next
/// command within that time skips the server start, and the stop leaves the user's path.
///
/// A marker file beside the cluster says who may stop the server. A command that uses the
/// server writes `in-use` into it before it looks for a running server; the last command to
/// end writes a fresh token and leaves a small detached shell that sleeps for the linger and
/// stops the server only if the marker still holds its token. So a command that started
/// during the linger (or a later linger) keeps the server up.
enum EmbeddedLinger {
    /// The linger in seconds from `HAUL_EMBEDDED_LINGER`; 0 stops the server at once.
    static func seconds(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Double {
        guard let text = environment["HAUL_EMBEDDED_LINGER"] else { return 30 }
        if ["0", "off", "no"].contains(text.trimmingWhitespace().lowercased()) { return 0 }
        return Duration.parseSeconds(text) ?? 30
    }

    /// The marker file of the cluster in `data`.
    static func marker(data: String) -> String { data + ".linger" }

    /// Marks the server as in use by this command (before looking for a running one).
    static func markInUse(data: String) {
        try? "in-use".write(toFile: marker(data: data), atomically: true, encoding: .utf8)
    }

    /// Schedules the stop: after `seconds`, `stop` runs unless another command marked the
    /// server in use (or scheduled a later stop) meanwhile.
    static func schedule(data: String, seconds: Double, stop: [String]) throws {
        let token = UUID().uuidString
        try token.write(toFile: marker(data: data), atomically: true, encoding: .utf8)
        let script = "sleep \"$1\"; [ \"$(cat \"$2\" 2>/dev/null)\" = \"$3\" ] || exit 0; rm -f \"$2\"; shift 3; exec \"$@\""
        _ = try EmbeddedStart.spawnDetached(
            ["/bin/sh", "-c", script, "haul-linger", String(format: "%.3f", seconds), marker(data: data), token] + stop, output: nil)
    }
}
