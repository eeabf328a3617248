import Foundation
import Synchronization

/// Holds receiving to at most `limit` bytes per second on average by making the receiving
/// thread wait after a chunk that came early (TCP then slows the sender). Pure: the caller
/// passes the clock and does the waiting.
///
/// Each chunk moves a due time on by `bytes / limit` seconds; the wait is how far the due time
/// is ahead of now. A pacer that fell behind (an idle spell, a slow origin) banks at most
/// `burst` seconds of credit, so that a long-lived pacer does not let a burst through at full
/// speed after an idle minute.
///
/// libcurl's own `CURLOPT_MAX_RECV_SPEED_LARGE` is not used: it stops limiting on a reused
/// easy handle (curl issue #7042), and every lane reuses its handle.
public struct RatePacer: Sendable {
    /// Bytes per second.
    public let limit: Int64
    /// The most seconds of credit a pacer behind its limit keeps.
    public static let burst = 0.25
    private var due: Double?

    /// A pacer for `limit` bytes per second (at least 1).
    public init(limit: Int64) {
        self.limit = max(1, limit)
    }

    /// Records `bytes` received at time `now` (seconds) and returns how long to wait before
    /// receiving more, so that the bytes so far took at least `bytes / limit` seconds (less
    /// the credit banked while behind).
    public mutating func wait(after bytes: Int, now: Double) -> Double {
        let due = max(self.due ?? now, now - Self.burst) + Double(bytes) / Double(limit)
        self.due = due
        return max(0, due - now)
    }
}

/// One `RatePacer` shared by every connection of a process (`--limit-rate`: bytes per second
/// in all): each connection's receiving thread records its chunks in it and waits for the
/// bytes of all of them. One connection alone gets the whole limit; several share it.
public final class SharedRatePacer: Sendable {
    private let pacer: Mutex<RatePacer>

    /// A pacer for `limit` bytes per second (at least 1).
    public init(limit: Int64) {
        pacer = Mutex(RatePacer(limit: limit))
    }

    /// Records `bytes` just received and waits (on this thread, at most 5 s) until the limit
    /// allows more.
    public func pace(_ bytes: Int) {
        let wait = pacer.withLock { $0.wait(after: bytes, now: Date().timeIntervalSince1970) }
        if wait > 0 { usleep(useconds_t(min(wait, 5) * 1_000_000)) }
    }
}
