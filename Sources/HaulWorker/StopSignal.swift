import Foundation

/// A descriptor that becomes readable once a worker is asked to stop, so that a thread blocked
/// in `poll` on a socket (the listener) wakes at once instead of at its next timeout.
final class StopSignal: Sendable {
    /// Poll this for `POLLIN`; never read from it (it stays readable for every waiter).
    let descriptor: Int32
    private let writeEnd: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        // Without a pipe (descriptors exhausted), waiters fall back to their poll timeout.
        if pipe(&ends) == 0 {
            _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        }
        descriptor = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// Makes `descriptor` readable (a second call adds nothing a waiter would notice).
    func fire() {
        guard writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }
}
