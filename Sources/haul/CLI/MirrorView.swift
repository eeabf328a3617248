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
                "reason": mirror.reason ?? NSNull(),
            ]
        }
    }

    /// One line a mirror: `  mirror 1:  healthy, 12.0 MiB, 0 failures  http://…`.
    static func lines(_ mirrors: [MirrorStatus]) -> [String] {
        mirrors.map { mirror in
            let reason = mirror.reason.map { " (\(SafeText.cleanLine($0)))" } ?? ""
            let failures = mirror.failures == 1 ? "1 failure" : "\(mirror.failures) failures"
            return "  mirror \(mirror.index): \(mirror.state)\(mirror.state == "demoted" ? reason : ""), \(ByteSize.format(mirror.bytes)), \(failures)  "
                + SafeText.cleanLine(Redaction.url(mirror.url))
        }
    }
}
