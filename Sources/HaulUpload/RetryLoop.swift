import Foundation
import HaulCore

/// Counts consecutive failed attempts under a ``RetryPolicy`` and sleeps between them.
///
/// Sleeps on the calling thread (a dedicated upload thread), waking every 100 ms to poll
/// `shouldCancel`.
struct RetryLoop {
    let policy: RetryPolicy
    let shouldCancel: () -> Bool
    /// Failures since the start or since the last ``madeProgress()``.
    private(set) var failures = 0

    /// Forgets earlier failures, once an attempt moved the upload forward.
    mutating func madeProgress() { failures = 0 }

    /// Waits before the next attempt after `error` (honouring its `retryAfter`), or rethrows it
    /// when it is not transient or the attempts are spent (the message then says how many were made).
    mutating func failed(_ error: HaulError) throws {
        failures += 1
        guard error.isTransient else { throw error }
        guard failures < policy.attempts else { throw error.givenUp(after: failures) }
        var remaining = policy.delay(forAttempt: failures, retryAfter: error.retryAfter, jitter: .random(in: 0..<1))
        while remaining > 0 {
            if shouldCancel() { throw HaulError(.canceled, "upload was canceled while waiting to retry") }
            let slice = min(remaining, 0.1)
            Thread.sleep(forTimeInterval: slice)
            remaining -= slice
        }
    }
}
