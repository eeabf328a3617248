/// Decides which connections an `HTTPServer` closes so that slow or idle clients cannot crowd
/// out requests (pure; the server keeps one under a lock and shuts the chosen sockets down).
///
/// A connection is *waiting* from when it opens, and again after each answer, until its next
/// request has fully arrived (head and body); then it is *answered*. Three rules:
/// - a connection that waits longer than `requestDeadline` is closed, however steadily it
///   trickles bytes (libmicrohttpd's own idle timeout restarts at every byte);
/// - an address may hold `perAddress` connections: one more closes that address's connection
///   that has waited longest (or the newcomer, when all others are being answered);
/// - the server holds `total` connections: one more closes the one that has waited longest.
/// So a new request always gets in, even from the address the slow clients use (a probe on
/// loopback, say), by displacing a slow client, and it is answered before any of them.
struct ConnectionGuard {
    /// The three limits.
    struct Limits: Sendable {
        var perAddress: Int
        var total: Int
        var requestDeadline: Double
    }

    struct Connection {
        let address: String
        /// Since when its next request has been awaited; nil while one is being answered.
        var waitingSince: Double?
        /// Chosen to be closed (its socket was shut down); no longer counted.
        var closing = false
    }

    let limits: Limits
    private(set) var connections: [Int32: Connection] = [:]

    init(limits: Limits) {
        self.limits = limits
    }

    /// Socket `socket` from `address` opened at `now`; returns the sockets to close.
    mutating func opened(_ socket: Int32, address: String, now: Double) -> [Int32] {
        connections[socket] = Connection(address: address, waitingSince: now)
        var victims: [Int32] = []
        let fromAddress = connections.filter { !$0.value.closing && $0.value.address == address }
        if fromAddress.count > limits.perAddress {
            victims.append(longestWaiting(among: fromAddress.filter { $0.key != socket }) ?? socket)
            connections[victims[0]]?.closing = true
        }
        let open = connections.filter { !$0.value.closing }
        if open.count > limits.total {
            let victim = longestWaiting(among: open.filter { $0.key != socket }) ?? socket
            connections[victim]?.closing = true
            victims.append(victim)
        }
        return victims
    }

    /// Socket `socket`'s request has fully arrived and is being answered.
    mutating func answering(_ socket: Int32) {
        connections[socket]?.waitingSince = nil
    }

    /// Socket `socket`'s request was answered at `now`: it waits for the next one.
    mutating func answered(_ socket: Int32, now: Double) {
        connections[socket]?.waitingSince = now
    }

    /// Socket `socket` was closed (by either side).
    mutating func closed(_ socket: Int32) {
        connections[socket] = nil
    }

    /// The sockets that have waited past the deadline at `now`, now marked closing.
    mutating func overdue(now: Double) -> [Int32] {
        let late = connections.filter { !$0.value.closing && ($0.value.waitingSince ?? now) + limits.requestDeadline <= now }.map(\.key)
        for socket in late { connections[socket]?.closing = true }
        return late
    }

    private func longestWaiting(among candidates: [Int32: Connection]) -> Int32? {
        candidates.compactMap { entry in entry.value.waitingSince.map { (entry.key, $0) } }.min { $0.1 < $1.1 }?.0
    }
}
