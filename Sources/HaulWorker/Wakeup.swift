import Foundation

/// Lets idle threads sleep until something they wait for may have happened (a NOTIFY, a stop,
/// a transfer settled), with a timeout as the backstop. `NSCondition` is the lock; every field
/// is read under it.
final class Wakeup: @unchecked Sendable {
    private let condition = NSCondition()
    private var generation = 0

    /// Wakes every waiting thread.
    func signal() {
        condition.lock()
        generation += 1
        condition.broadcast()
        condition.unlock()
    }

    /// A mark for `wait(since:timeout:)`: a signal given after it was taken is never missed.
    func mark() -> Int {
        condition.lock()
        defer { condition.unlock() }
        return generation
    }

    /// Sleeps until a `signal` after `mark` (at once if there was one) or `timeout` seconds.
    func wait(since mark: Int, timeout: Double) {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while generation == mark, condition.wait(until: deadline) {}
        condition.unlock()
    }
}
