import Foundation

/// Lets idle role threads sleep until work may have appeared (a NOTIFY or a stop), with the
/// poll interval as the backstop. `NSCondition` is the lock; every field is read under it.
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

    /// Sleeps until `signal` or `timeout` seconds, whichever comes first.
    func wait(timeout: Double) {
        condition.lock()
        let seen = generation
        let deadline = Date(timeIntervalSinceNow: timeout)
        while generation == seen, condition.wait(until: deadline) {}
        condition.unlock()
    }
}
