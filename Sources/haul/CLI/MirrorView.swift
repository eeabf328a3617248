import Foundation
import HaulCore
import HaulQueue

/// How `haul status` shows a transfer's mirrors: each one's bytes, failures and state.
enum MirrorView {
    /// The `mirrors` array of `haul status --json` (URLs without their credentials).
    static func json(_ mirrors: [MirrorStatus]) -> [[String: Any]] {
        mirrors.map { mirror in
            [
                "url": Redaction.url(mirror.url), "bytes": mirror.bytes, "failures": mirror.failures, "state": mirror.state,
                "reason": mirror.reason ?? NSNull(), "retry_after": mirror.retryAfter ?? NSNull(),
                "rate": mirror.rate ?? NSNull(),
            ]
        }
    }

    /// One line a mirror: `  mirror 1: healthy, 12.0 MiB, 0 failures  http://…`, or
    /// `  mirror 2: resting until 2026-01-01 10:00:00 UTC (connection refused), …`.
    static func lines(_ mirrors: [MirrorStatus]) -> [String] {
        mirrors.map { mirror in
            "  mirror \(mirror.index): \(state(mirror)), \(ByteSize.format(mirror.bytes)), \(mirror.failures == 1 ? "1 failure" : "\(mirror.failures) failures")  "
                + SafeText.cleanLine(Redaction.url(mirror.url))
        }
    }

    /// `healthy`, `resting until TIME (reason)`, `trial (reason)` or `demoted (reason)`.
    static func state(_ mirror: MirrorStatus) -> String {
        guard mirror.state != "healthy" else { return mirror.state }
        let until = mirror.state == "resting" ? mirror.retryAfter.map { " until \($0)" } ?? "" : ""
        return mirror.state + until + (mirror.reason.map { " (\(SafeText.cleanLine($0)))" } ?? "")
    }
}
