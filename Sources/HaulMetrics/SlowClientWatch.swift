import CMicroHTTPD
import Glibc
import Synchronization

/// Carries out a `ConnectionGuard` for one `HTTPServer`: libmicrohttpd reports each
/// connection's events (on its own threads), a sweeper thread closes the connections that
/// waited past the deadline, and a connection is closed by shutting its socket down, which
/// libmicrohttpd then sees as the client leaving. Thread-safe.
///
/// A socket is shut down only under the lock and only while the guard still lists it:
/// libmicrohttpd reports a close before it closes the socket, so a number reused by a new
/// connection is never hit.
final class SlowClientWatch: Sendable {
    private let state: Mutex<ConnectionGuard>
    private let stopping = Atomic<Bool>(false)
    private let sweeper = Mutex<pthread_t?>(nil)

    init(limits: ConnectionGuard.Limits) {
        state = Mutex(ConnectionGuard(limits: limits))
    }

    /// One event from libmicrohttpd (`haul_mhd_event_kind`).
    func event(_ kind: Int32, socket: Int32, address: UnsafePointer<sockaddr>?) {
        guard socket >= 0 else { return }
        let now = Self.now()
        state.withLock { table in
            switch UInt32(kind) {
            case HAUL_MHD_OPENED.rawValue:
                for victim in table.opened(socket, address: SocketAddress.text(address), now: now) { Self.close(victim) }
            case HAUL_MHD_CLOSED.rawValue: table.closed(socket)
            case HAUL_MHD_ANSWERING.rawValue: table.answering(socket)
            case HAUL_MHD_ANSWERED.rawValue: table.answered(socket, now: now)
            default: break
            }
        }
    }

    /// Starts the sweeper thread; returns false when no thread could be started.
    func startSweeping() -> Bool {
        var thread = pthread_t()
        let retained = Unmanaged.passRetained(self)
        let started = pthread_create(
            &thread, nil,
            { argument in
                let watch = Unmanaged<SlowClientWatch>.fromOpaque(argument!).takeRetainedValue()
                watch.sweepUntilStopped()
                return nil
            }, retained.toOpaque())
        guard started == 0 else {
            retained.release()
            return false
        }
        sweeper.withLock { $0 = thread }
        return true
    }

    /// Stops the sweeper thread and waits for it.
    func stopSweeping() {
        stopping.store(true, ordering: .relaxed)
        if let thread = sweeper.withLock({ $0.take() }) { pthread_join(thread, nil) }
    }

    private func sweepUntilStopped() {
        let pause = UInt32(min(0.25, state.withLock { $0.limits.requestDeadline } / 4) * 1_000_000)
        while !stopping.load(ordering: .relaxed) {
            usleep(pause)
            let now = Self.now()
            state.withLock { table in
                for socket in table.overdue(now: now) { Self.close(socket) }
            }
        }
    }

    private static func close(_ socket: Int32) {
        _ = shutdown(socket, Int32(SHUT_RDWR))
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
