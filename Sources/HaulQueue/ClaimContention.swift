import Foundation

/// How long a claimer waits before it claims again after a claim took nothing because other
/// claimers held the rows of every host with room. Claims never wait for such a row, and pass
/// on to the next host with room (`HostLimits.claimHost`); a row is held only for one claim
/// statement, so a claimer that skipped it finds, a moment later, either the slots left there
/// or the host full (a claim that then reads no transfer). Claimers no longer queue on a row,
/// and each contention costs a bounded number of claims. A worker's lanes wait so (`Worker`'s
/// lane loop), and so does `haul-bench`'s claim loop, which measures Haul's claims as a fleet
/// runs them. Pure.
public enum ClaimContention {
    /// The first wait after a contended claim, in seconds.
    public static let firstDelay = 0.01

    /// Seconds to wait after `rounds` (1 or more) claims in a row were contended: 10 ms, 40 ms,
    /// 160 ms, … times `jitter` (so that claimers that met at one host's row do not meet again),
    /// while that is shorter than `pollInterval`; `nil` after, when the claimer idles as usual.
    public static func delay(rounds: Int, pollInterval: Double, jitter: Double = 1) -> Double? {
        let delay = firstDelay * pow(4, Double(min(max(rounds - 1, 0), 16))) * jitter
        return delay < pollInterval ? delay : nil
    }
}
