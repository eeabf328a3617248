import Foundation

/// Lets idle threads sleep until something they wait for may have happened (a NOTIFY, a stop,
/// a transfer settled, host slots given back), with a timeout as the backstop. `NSCondition` is
/// the lock; every field is read under it.
final class Wakeup: @unchecked Sendable {
    private let condition = NSCondition()
    private var generation = 0
    /// Wake-ups for one thread each (`signalOne`), taken by the next thread that waits or wakes.
    private var singles = 0

    /// Wakes every waiting thread.
    func signal() {
        condition.lock()
        generation += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Wakes one waiting thread (or the next one to wait): for work that one thread can take,
    /// such as host slots a batch gave back, without every idle thread asking the database.
    func signalOne() {
        condition.lock()
        // Bounded: signals while every thread is busy leave only a few spare wake-ups behind.
        singles = min(singles + 1, 4)
        // Every waiter wakes and the first to take the lock takes the wake-up; the others sleep
        // on. `signal` woke one waiter of the condition's choosing, which could be a thread that
        // takes none (`wait(takingSingles: false)`): the wake-up then stayed unseen until a lane's
        // next timeout.
        condition.broadcast()
        condition.unlock()
    }

    /// A mark for `wait(since:timeout:)`: a signal given after it was taken is never missed.
    func mark() -> Int {
        condition.lock()
        defer { condition.unlock() }
        return generation
    }

    /// Sleeps until a `signal` after `mark` (at once if there was one), a `signalOne` this thread
    /// takes, or `timeout` seconds, whichever comes first.
    /// - Parameter takingSingles: `false` for a thread that is not after work (a pause, which
    ///   only a stop ends early): it leaves `signalOne`'s wake-ups to the threads that are.
    func wait(since mark: Int, timeout: Double, takingSingles: Bool = true) {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while generation == mark, !takingSingles || singles == 0, condition.wait(until: deadline) {}
        if takingSingles, generation == mark, singles > 0 { singles -= 1 }
        condition.unlock()
    }
}
