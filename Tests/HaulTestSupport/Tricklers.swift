import Foundation

/// Slow clients ("slowloris"): `count` connections to `127.0.0.1:port`, each sending a request
/// head that never ends, one byte per `interval` seconds, each on its own phase of the interval
/// as independent clients would. A connection the server closes is counted and opened again.
/// Runs on one thread of its own until `stop()`, and at most `limit` seconds.
public final class Tricklers: @unchecked Sendable {
    // `sockets` and `sent` are touched only by the trickling thread; the counters under `lock`.
    private let port: UInt16
    private let source: String
    private let interval: Double
    private let limit: Double
    private var sockets: [Int32]
    private var sent: [Int]
    private let lock = NSLock()
    private var stopRequested = false
    private var closedByServer = 0
    private var openedCount = 0
    private let done = DispatchSemaphore(value: 0)

    /// What each connection sends, one byte at a time; after it, `a` forever.
    static let head = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)

    /// Starts `count` slow clients from address `source` (a loopback address of this host).
    public init(count: Int, port: Int, source: String = "127.0.0.1", interval: Double = 0.3, limit: Double = 60) throws {
        self.port = UInt16(port)
        self.source = source
        self.interval = interval
        self.limit = limit
        sockets = Array(repeating: -1, count: count)
        sent = Array(repeating: 0, count: count)
        let thread = Thread { [self] in
            trickle()
            done.signal()
        }
        thread.start()
    }

    /// How many times the server closed one of the connections.
    public var closed: Int { lock.withLock { closedByServer } }
    /// How many connections were opened (first ones and reopened ones).
    public var opened: Int { lock.withLock { openedCount } }

    /// Stops trickling, closes the connections and waits for the thread.
    public func stop() {
        let first = lock.withLock {
            defer { stopRequested = true }
            return !stopRequested
        }
        if first { done.wait() }
    }

    private func trickle() {
        let start = Date()
        let count = sockets.count
        var tick = 0
        while !lock.withLock({ stopRequested }) && Date().timeIntervalSince(start) < limit {
            for index in 0..<count {
                // Client `index` acts at its own phase: index/count of the interval into each tick.
                let due = Double(tick) * interval + interval * Double(index) / Double(count)
                let wait = due - Date().timeIntervalSince(start)
                if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
                step(index)
            }
            tick += 1
        }
        for socket in sockets where socket >= 0 { close(socket) }
    }

    /// Sends client `index`'s next byte, reopening its connection if the server closed it.
    private func step(_ index: Int) {
        if sockets[index] >= 0 && serverClosed(sockets[index]) {
            close(sockets[index])
            sockets[index] = -1
            lock.withLock { closedByServer += 1 }
        }
        if sockets[index] < 0 {
            sockets[index] = connectSocket()
            sent[index] = 0
            if sockets[index] < 0 { return }
            lock.withLock { openedCount += 1 }
        }
        var byte = sent[index] < Self.head.count ? Self.head[sent[index]] : UInt8(ascii: "a")
        if send(sockets[index], &byte, 1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) == 1 { sent[index] += 1 }
    }

    /// Whether the server has closed `socket` (end of stream or an error; no answer is expected).
    private func serverClosed(_ socket: Int32) -> Bool {
        var byte: UInt8 = 0
        let result = recv(socket, &byte, 1, Int32(MSG_DONTWAIT))
        return result == 0 || (result < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || result > 0
    }

    private func connectSocket() -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) } }
        guard bound == 0, connected == 0 else {
            close(fd)
            return -1
        }
        return fd
    }
}
