import Foundation
import HaulCore

/// Counts consecutive failed attempts under a ``RetryPolicy`` and sleeps between them.
///
/// Sleeps on the calling thread (a dedicated upload or worker thread), waking every 100 ms to
/// poll `shouldCancel`.
public struct RetryLoop {
    let policy: RetryPolicy
    let shouldCancel: () -> Bool
    /// Failures since the start or since the last ``madeProgress()``.
    public private(set) var failures = 0

    /// A loop under `policy` that gives up waiting once `shouldCancel` says so.
    public init(policy: RetryPolicy, shouldCancel: @escaping () -> Bool = { false }) {
        self.policy = policy
        self.shouldCancel = shouldCancel
    }

    /// Forgets earlier failures, once an attempt moved the upload forward.
    public mutating func madeProgress() { failures = 0 }

    /// Runs `body` until it succeeds, retrying its transient failures under the policy.
    public mutating func run<T>(_ body: () throws -> T) throws -> T {
        while true {
            do { return try body() } catch let error as HaulError { try failed(error) }
        }
    }

    /// Waits before the next attempt after `error` (honouring its `retryAfter`), or rethrows it
    /// when it is not transient or the attempts are spent (the message then says how many were made).
    public mutating func failed(_ error: HaulError) throws {
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
