import Foundation

/// One long-lived thread of a worker process (a lane, the housekeeper, the listener, the
/// checkpoint recorder, a lease keeper), started and joined the same way for all of them.
///
/// libcurl and libpq block, so these run on threads of their own rather than on Swift's
/// cooperative pool. Each service's body returns once its own stop condition holds (the
/// worker's stop flag, or the service's own `stop()`); whoever started the thread joins it.
final class ServiceThread: Sendable {
    /// The thread's name, as `ps -L` and debuggers show it.
    let name: String
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `body` on a new thread named `name`.
    init(_ name: String, stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) {
        self.name = name
        let thread = Thread { [finished] in
            body()
            finished.signal()
        }
        thread.name = name
        thread.stackSize = stackSize
        thread.start()
    }

    /// Waits until `deadline` for the body to return. - Returns: whether it did.
    @discardableResult
    func join(until deadline: DispatchTime = .distantFuture) -> Bool {
        guard finished.wait(timeout: deadline) == .success else { return false }
        // Let a later join of the same thread succeed too.
        finished.signal()
        return true
    }
}
