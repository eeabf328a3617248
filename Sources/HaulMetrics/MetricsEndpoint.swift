/// What the metrics server answers to one request, without any I/O: the routing of
/// `MetricsServer`, kept apart so that it can be tested without a socket.
final class MetricsEndpoint: Sendable {
    /// One complete HTTP response.
    struct Reply: Equatable, Sendable {
        var status: UInt32
        var contentType: String
        var body: String
        /// The `Allow` header, sent with 405.
        var allow: String? = nil
    }

    let registry: MetricsRegistry
    let health: @Sendable () -> (ok: Bool, reason: String)

    init(registry: MetricsRegistry, health: @escaping @Sendable () -> (ok: Bool, reason: String)) {
        self.registry = registry
        self.health = health
    }

    /// GET (or HEAD) `/metrics` and `/healthz`; 404 for other paths, 405 for other methods.
    /// `path` has no query string. Runs on a libmicrohttpd pool thread when served.
    func reply(method: String, path: String) -> Reply {
        let text = "text/plain; charset=utf-8"
        guard path == "/metrics" || path == "/healthz" else {
            return Reply(status: 404, contentType: text, body: "not found: try /metrics or /healthz\n")
        }
        guard method == "GET" || method == "HEAD" else {
            return Reply(status: 405, contentType: text, body: "method \(method) not allowed: use GET\n", allow: "GET, HEAD")
        }
        if path == "/metrics" {
            return Reply(status: 200, contentType: ExpositionFormat.contentType, body: registry.render())
        }
        let (ok, reason) = health()
        if ok { return Reply(status: 200, contentType: text, body: "ok\n") }
        let line = reason.isEmpty ? "unhealthy" : reason.split(whereSeparator: \.isNewline).joined(separator: " ")
        return Reply(status: 503, contentType: text, body: line + "\n")
    }
}
