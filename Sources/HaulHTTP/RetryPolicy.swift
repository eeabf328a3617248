import Foundation
import HaulCore

/// How often and how patiently a request is retried after a 5xx answer or a network error
/// that `CurlFailure` calls transient: the one schedule of uploads (``upload``) and object-store
/// requests (``store``), run by ``RetryLoop``. (A download's segments are retried by the
/// worker under the transfer's lease, with ``HaulCore/Backoff`` too.)
///
/// Waits follow ``HaulCore/Backoff`` like the rest of Haul: `baseDelay × 2ⁿ⁻¹` capped at
/// `maxDelay`, spread by jitter over 50–100 %; a longer `Retry-After` from the server wins
/// (capped at an hour).
public struct RetryPolicy: Sendable, Equatable {
    /// `haul upload` and `--upload-to`: 5 attempts, 0.5 s doubling to 30 s.
    public static let upload = RetryPolicy()
    /// A request to an S3 store whose bytes are at hand (not a streamed part): 5 attempts,
    /// 0.2 s doubling to 5 s, as a worker's lane must not wait long for the store.
    public static let store = RetryPolicy(attempts: 5, baseDelay: 0.2, maxDelay: 5)

    /// Attempts in total, the first one included; `1` means never retry.
    public var attempts: Int
    /// Seconds before the first retry, before jitter.
    public var baseDelay: Double
    /// Upper bound in seconds for the exponential part of a wait.
    public var maxDelay: Double

    /// A policy; values are clamped so that there is at least one attempt and no negative wait.
    public init(attempts: Int = 5, baseDelay: Double = 0.5, maxDelay: Double = 30) {
        self.attempts = max(1, attempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
    }

    /// Seconds to wait after attempt `attempt` (1-based) failed, before the next one.
    /// - Parameters:
    ///   - retryAfter: the server's `Retry-After` in seconds, if it sent one.
    ///   - jitter: a number in `0..<1`; callers pass `Double.random(in: 0..<1)`.
    public func delay(forAttempt attempt: Int, retryAfter: Double? = nil, jitter: Double) -> Double {
        Backoff(base: baseDelay, cap: maxDelay).delay(afterAttempt: attempt, retryAfter: retryAfter, jitter: jitter)
    }

    /// Parses a `Retry-After` value, either delay-seconds or an HTTP-date, into seconds from `now`.
    /// - Returns: `nil` when the value is neither; a date in the past gives `0`.
    public static func parseRetryAfter(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingWhitespace()
        if !text.isEmpty, text.allSatisfy(\.isASCIIDigit) { return Double(text) }
        for format in httpDateFormats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return max(0, date.timeIntervalSince(now)) }
        }
        return nil
    }

    /// IMF-fixdate, then the obsolete RFC 850 and asctime forms RFC 9110 says to accept.
    private static let httpDateFormats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]
}
