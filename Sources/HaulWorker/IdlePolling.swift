import Foundation

/// What one step of a lane found.
enum StepOutcome: Equatable {
    /// It did some work (and may find more at once).
    case worked
    /// Nothing for it now, though the fleet has work in hand (a running segment to split later,
    /// a retry not yet due, another worker's transfers).
    case nothingDue
    /// Nothing anywhere: no queued, running, pending or finalizing row (`WorkProbe`).
    case nothingAnywhere
    /// Nothing taken, because other claimers held the row of every host with room at that
    /// moment (claims never wait for one): they may leave slots and work, so look again shortly.
    case contended
}

/// How long an idle lane sleeps before it asks the database for work again. Pure.
///
/// Work is announced (NOTIFY, a lane of this worker that found some, slots given back), so
/// polling is only the backstop: for notifications a pooler drops, for work that becomes due
/// with time (a retry's backoff ending), and for stragglers to split. One idle lane of each
/// worker, the poller (the first to go idle), keeps looking every `pollInterval` while the
/// fleet has work in hand, and less and less often, up to `pollerCeiling` poll intervals, while
/// there is none at all; when it finds work it wakes one more lane (any lane that was idle and
/// finds work does), which wakes the next only if it finds work too. The other idle lanes sleep
/// until woken, looking on their own only every `othersCeiling` poll intervals. So an idle
/// fleet costs the database a cheap statement now and then, not four per lane per interval.
enum IdlePolling {
    /// The poller's longest sleep, in poll intervals (4 s at the default 1 s).
    static let pollerCeiling = 4.0
    /// The other lanes' sleep, in poll intervals (at least 30 s): a backstop only.
    static let othersCeiling = 30.0

    /// Seconds to sleep after `idleRounds` (1 or more) rounds in a row found nothing anywhere
    /// (1 while the fleet has work in hand).
    static func delay(idleRounds: Int, pollInterval: Double, poller: Bool) -> Double {
        guard poller else { return max(30, pollInterval * othersCeiling) }
        let doubling = pollInterval * Double(1 << min(max(idleRounds - 1, 0), 16))
        return min(doubling, pollInterval * pollerCeiling)
    }
}
