import HaulCore

/// An embedded HTTP server (libmicrohttpd) answering `GET /metrics` with the registry in
/// Prometheus text format 0.0.4 and `GET /healthz` with 200 `ok` or 503 and a reason.
///
/// It listens from `init` until `stop()` (or deinit). libmicrohttpd polls on its own
/// internal thread and answers from a pool of two threads of its own: `registry.render()`
/// and the `health` closure run on those threads, never on the caller's or on the Swift
/// concurrency pool, so `health` must be quick, non-blocking and thread-safe.
public final class MetricsServer: Sendable {
    /// Where the server listens.
    public var address: MetricsAddress { server.address }
    private let server: HTTPServer

    /// Threads that answer requests; scrapes are rare and rendering is quick.
    private static let threadPoolSize: UInt32 = 2

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
        let endpoint = MetricsEndpoint(registry: registry, health: health)
        server = try HTTPServer(address: address, limits: .init(threads: Self.threadPoolSize)) { request in
            let reply = endpoint.reply(method: request.method, path: request.path)
            return HTTPResponse(
                status: reply.status, contentType: reply.contentType, body: reply.body,
                headers: reply.allow.map { [HTTPResponse.Header("Allow", $0)] } ?? [])
        }
    }

    /// Stops listening, closes open connections and waits for libmicrohttpd's threads to
    /// exit. Safe to call more than once and from any thread except libmicrohttpd's own
    /// (never from the `health` closure: it would wait for itself).
    public func stop() {
        server.stop()
    }
}
