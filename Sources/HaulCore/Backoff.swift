/// Exponential backoff with jitter, honouring a server's `Retry-After`. Pure: the random
/// fraction is passed in so tests can pin it.
public struct Backoff: Sendable, Equatable {
    /// Delay before the first retry, in seconds.
    public var base: Double
    /// Longest delay, in seconds.
    public var cap: Double

    /// A policy; defaults suit origin errors (1 s doubling to 60 s).
    public init(base: Double = 1, cap: Double = 60) {
        self.base = base
        self.cap = cap
    }

    /// Seconds to wait after failed attempt number `attempt` (1-based).
    /// - Parameters:
    ///   - retryAfter: the server's `Retry-After`, which wins when longer (capped at an hour).
    ///   - jitter: a number in 0..<1; the delay is spread over 50–100 % of the exponential value.
    public func delay(afterAttempt attempt: Int, retryAfter: Double? = nil, jitter: Double) -> Double {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        let raw = min(cap, base * pow2(exponent))
        let spread = raw * (0.5 + 0.5 * min(max(jitter, 0), 1))
        guard let retryAfter, retryAfter > spread else { return spread }
        return min(retryAfter, 3600)
    }

    private func pow2(_ exponent: Double) -> Double {
        var value = 1.0
        for _ in 0..<Int(exponent) { value *= 2 }
        return value
    }
}
