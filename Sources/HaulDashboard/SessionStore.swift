import Synchronization

/// The browser sessions this process started and that have not ended: a session cookie is
/// honoured only while its value is here, so logging out (or a restart) ends it on the server
/// and a copy of the old cookie is refused. Thread-safe.
final class SessionStore: Sendable {
    /// Live sessions at most; past that the one closest to expiry is ended (each needs the token).
    static let capacity = 1000

    /// Session cookie values and when each expires (Unix seconds).
    private let live = Mutex<[String: Double]>([:])

    /// Starts session `value`, valid until `expiry`; drops the expired ones on the way.
    func start(_ value: String, expiry: Double, now: Double) {
        live.withLock { sessions in
            sessions = sessions.filter { $0.value > now }
            if sessions.count >= Self.capacity, let first = sessions.min(by: { $0.value < $1.value }) { sessions[first.key] = nil }
            sessions[value] = expiry
        }
    }

    /// Whether `value` is a session started here that has neither ended nor expired at `now`.
    func isLive(_ value: String, now: Double) -> Bool {
        live.withLock { ($0[value] ?? 0) > now }
    }

    /// Ends session `value` (logout).
    func end(_ value: String) {
        live.withLock { _ = $0.removeValue(forKey: value) }
    }
}
