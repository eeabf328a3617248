import CMicroHTTPD
import HaulCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An embedded HTTP server (libmicrohttpd) answering `GET /metrics` with the registry in
/// Prometheus text format 0.0.4 and `GET /healthz` with 200 `ok` or 503 and a reason.
///
/// It listens from `init` until `stop()` (or deinit). libmicrohttpd polls on its own
/// internal thread and answers from a pool of two threads of its own: `registry.render()`
/// and the `health` closure run on those threads, never on the caller's or on the Swift
/// concurrency pool, so `health` must be quick, non-blocking and thread-safe.
public final class MetricsServer: Sendable {
    /// Where the server listens.
    public let address: MetricsAddress
    /// The running daemon and the retained endpoint its callback reads; nil once stopped.
    private let running: Mutex<Daemon?>

    /// Threads that answer requests; scrapes are rare and rendering is quick.
    private static let threadPoolSize: UInt32 = 2
    /// Seconds an idle connection stays open.
    private static let idleTimeoutSeconds: UInt32 = 10
    /// Connections open at once; more are refused rather than queued.
    private static let connectionLimit: UInt32 = 64

    /// The daemon pointer and the context passed to it; only touched under `running`.
    private struct Daemon: ~Copyable {
        let pointer: OpaquePointer
        let endpoint: Unmanaged<MetricsEndpoint>
    }

    /// Parses `address` (`HOST:PORT`) and starts serving `registry` there.
    ///
    /// - Throws: a `usage` HaulError when the address is malformed, `metrics-addr-in-use`
    ///   when another process listens there, `metrics-addr-unavailable` when the address is
    ///   not this host's or the port needs privileges, `metrics-server` otherwise.
    public convenience init(
        address: String, registry: MetricsRegistry, health: @escaping @Sendable () -> (ok: Bool, reason: String)
    ) throws(HaulError) {
        try self.init(address: MetricsAddress.parse(address), registry: registry, health: health)
    }

    /// Starts serving `registry` on an already parsed address; throws as `init(address:registry:health:)`.
    public init(
        address: MetricsAddress, registry: MetricsRegistry, health: @escaping @Sendable () -> (ok: Bool, reason: String)
    ) throws(HaulError) {
        self.address = address
        let endpoint = Unmanaged.passRetained(MetricsEndpoint(registry: registry, health: health))
        let pointer = SocketAddress.withSockaddr(address) { sockaddr, _ in
            haul_mhd_start(
                sockaddr, address.family == .ipv6 ? 1 : 0, Self.threadPoolSize, Self.idleTimeoutSeconds, Self.connectionLimit,
                metricsAccessHandler, endpoint.toOpaque())
        }
        guard let pointer else {
            endpoint.release()
            throw Self.startFailure(address)
        }
        running = Mutex(Daemon(pointer: pointer, endpoint: endpoint))
    }

    deinit {
        stop()
    }

    /// Stops listening, closes open connections and waits for libmicrohttpd's threads to
    /// exit. Safe to call more than once and from any thread except libmicrohttpd's own
    /// (never from the `health` closure: it would wait for itself).
    public func stop() {
        guard let daemon = running.withLock({ $0.take() }) else { return }
        MHD_stop_daemon(daemon.pointer)
        daemon.endpoint.release()
    }

    /// Why libmicrohttpd could not listen: it does not say, so bind a probe socket the same
    /// way (with SO_REUSEADDR, as libmicrohttpd does) and read its errno.
    private static func startFailure(_ address: MetricsAddress) -> HaulError {
        let prefix = "cannot serve metrics on \(address.text)"
        switch SocketAddress.probeBind(address) {
        case EADDRINUSE:
            return HaulError("metrics-addr-in-use", "\(prefix): address in use", hint: "choose another --metrics-addr")
        case EADDRNOTAVAIL:
            return HaulError(
                "metrics-addr-unavailable", "\(prefix): no interface of this host has that address",
                hint: "use 127.0.0.1, 0.0.0.0 or one of this host's addresses in --metrics-addr")
        case EACCES:
            return HaulError(
                "metrics-addr-unavailable", "\(prefix): permission denied",
                hint: "ports below 1024 need privileges; choose a port such as 9464")
        case EAFNOSUPPORT:
            return HaulError(
                "metrics-addr-unavailable", "\(prefix): this host has no IPv6",
                hint: "use an IPv4 --metrics-addr such as 127.0.0.1:9464")
        case let code?:
            return HaulError("metrics-server", "\(prefix): \(String(cString: strerror(code)))", hint: "choose another --metrics-addr")
        case nil:
            return HaulError("metrics-server", "\(prefix): the embedded HTTP server (libmicrohttpd) failed to start", transient: true)
        }
    }
}

/// The libmicrohttpd access handler; runs on one of the daemon's pool threads with `context`
/// being the `MetricsEndpoint` the server retains until `MHD_stop_daemon` has returned.
private func metricsAccessHandler(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
    uploadDataSize: UnsafeMutablePointer<Int>?, requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context, let connection, let url, let method else { return .NO }
    let endpoint = Unmanaged<MetricsEndpoint>.fromOpaque(context).takeUnretainedValue()
    let reply = endpoint.reply(method: String(cString: method), path: String(cString: url))
    var body = Array(reply.body.utf8)
    return body.withUnsafeMutableBytes { bytes in
        reply.contentType.withCString { contentType in
            if let allow = reply.allow {
                return allow.withCString { haul_mhd_respond(connection, reply.status, contentType, $0, bytes.baseAddress, bytes.count) }
            }
            return haul_mhd_respond(connection, reply.status, contentType, nil, bytes.baseAddress, bytes.count)
        }
    }
}
