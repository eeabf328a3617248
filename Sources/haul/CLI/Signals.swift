import Foundation
import Synchronization

private let signalCount = Atomic<Int>(0)

/// SIGINT / SIGTERM handling for long-running commands: the first signal asks for a graceful
/// stop (the caller polls `stopRequested`), a second one exits at once.
enum Signals {
    /// Installs the handlers.
    static func install() {
        let handler: @convention(c) (Int32) -> Void = { _ in
            if signalCount.add(1, ordering: .relaxed).newValue > 1 {
                _exit(130)
            }
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        // A parent may have started us with these blocked (threads of some runtimes do); unblock them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Whether a stop was asked for.
    static var stopRequested: Bool { signalCount.load(ordering: .relaxed) > 0 }
}
