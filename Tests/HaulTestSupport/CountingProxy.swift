import Foundation

/// A TCP proxy on 127.0.0.1 that forwards every connection to a service on 127.0.0.1 and
/// counts the connections it accepted: how many TCP connections a client opened to the
/// service, seen from outside the client. One thread accepts, one thread per connection copies
/// bytes both ways; a connection ends when either side closes it.
public final class CountingProxy: @unchecked Sendable {
    // `accepted`, `sockets` and `stopped` are guarded by `lock`; the rest is set once.
    /// The port clients connect to.
    public let port: Int
    private let target: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var accepted = 0
    private var sockets: Set<Int32> = []
    private var stopped = false

    /// Listens on a free port of 127.0.0.1 and forwards to `127.0.0.1:targetPort`.
    public init(targetPort: Int) throws {
        target = UInt16(targetPort)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("proxy: cannot create a socket") }
        var address = Self.loopback(port: 0)
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
        guard bound == 0, listen(fd, 128) == 0 else {
            close(fd)
            throw TestFailure("proxy: cannot listen on 127.0.0.1")
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) } }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    /// The URL of the service through the proxy, for a service reached as `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// How many connections clients opened so far.
    public var connections: Int { lock.withLock { accepted } }

    /// Stops accepting and closes every connection; once (the test's `defer` and `deinit` both
    /// call it). The descriptors are shut down under the lock, and the pumps close theirs under
    /// it, and the listener is closed only by the accept loop after the first stop: a second
    /// stop, or a pump's close racing this one, would otherwise shut down a descriptor number
    /// that another test had opened meanwhile (another proxy's listener: its clients were then
    /// refused, a failure seen once in a full run).
    public func stop() {
        lock.withLock {
            guard !stopped else { return }
            stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    deinit { stop() }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = Self.loopback(port: target)
            let size = socklen_t(MemoryLayout<sockaddr_in>.size)
            let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, size) } }
            let admitted = lock.withLock {
                accepted += 1
                guard !stopped, connected == 0 else { return false }
                sockets.formUnion([client, upstream])
                return true
            }
            guard admitted else {
                close(client)
                close(upstream)
                continue
            }
            Thread { [self] in pump(client, upstream) }.start()
        }
        close(listener)
    }

    /// Copies bytes both ways until either side closes.
    private func pump(_ a: Int32, _ b: Int32) {
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        loop: while true {
            guard poll(&fds, 2, 1000) >= 0 || errno == EINTR else { break }
            for index in 0..<2 where fds[index].revents != 0 {
                let from = fds[index].fd
                let to = fds[1 - index].fd
                let got = read(from, &buffer, buffer.count)
                guard got > 0, writeAll(to, buffer, got) else { break loop }
            }
        }
        lock.withLock {
            sockets.remove(a)
            sockets.remove(b)
            close(a)
            close(b)
        }
    }

    private func writeAll(_ fd: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
        var done = 0
        while done < count {
            let wrote = buffer.withUnsafeBytes { send(fd, $0.baseAddress! + done, count - done, Int32(MSG_NOSIGNAL)) }
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else { return false }
            done += wrote
        }
        return true
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        return address
    }
}
