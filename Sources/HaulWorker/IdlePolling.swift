/// How long an idle lane sleeps before it asks the database for work again. Pure.
///
/// Work is announced (NOTIFY, a lane of this worker that found some, slots given back), so
/// polling is only the backstop: for notifications a pooler drops, and for work that becomes
/// due with time (a retry's backoff ending). One lane of each worker, the poller, keeps looking,
/// every `pollInterval` at first, then less and less often while nothing turns up, up to
/// `pollerCeiling` poll intervals; when it finds work after a quiet spell it wakes the others.
/// The other lanes sleep until woken, looking on their own only every `othersCeiling` poll
/// intervals. So an idle fleet costs the database a few cheap statements a second, not four
/// per lane per poll interval.
enum IdlePolling {
    /// The poller's longest sleep, in poll intervals (4 s at the default 1 s).
    static let pollerCeiling = 4.0
    /// The other lanes' sleep, in poll intervals (at least 30 s): a backstop only.
    static let othersCeiling = 30.0

    /// Seconds to sleep after `idleRounds` (1 or more) rounds in a row found nothing.
    static func delay(idleRounds: Int, pollInterval: Double, poller: Bool) -> Double {
        guard poller else { return max(30, pollInterval * othersCeiling) }
        let doubling = pollInterval * Double(1 << min(max(idleRounds - 1, 0), 16))
        return min(doubling, pollInterval * pollerCeiling)
    }
}
