/// Holds one request to at most `limit` bytes per second on average by making its receiving
/// thread wait after a chunk that came early (TCP then slows the sender). Pure: the caller
/// passes the clock and does the waiting.
///
/// libcurl's own `CURLOPT_MAX_RECV_SPEED_LARGE` is not used: it stops limiting on a reused
/// easy handle (curl issue #7042), and every lane reuses its handle.
public struct RatePacer: Sendable {
    /// Bytes per second.
    public let limit: Int64
    private var start: Double?
    private var received: Int64 = 0

    /// A pacer for `limit` bytes per second (at least 1).
    public init(limit: Int64) {
        self.limit = max(1, limit)
    }

    /// Records `bytes` received at time `now` (seconds) and returns how long to wait before
    /// receiving more, so that the bytes so far took at least `bytes / limit` seconds.
    public mutating func wait(after bytes: Int, now: Double) -> Double {
        let start = self.start ?? now
        self.start = start
        received += Int64(bytes)
        return max(0, start + Double(received) / Double(limit) - now)
    }
}
