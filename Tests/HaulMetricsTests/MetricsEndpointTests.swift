import HaulTestSupport
import Testing

@testable import HaulMetrics

@Suite struct MetricsEndpointTests {
    let registry = MetricsRegistry()

    func endpoint(ok: Bool = true, reason: String = "") -> MetricsEndpoint {
        MetricsEndpoint(registry: registry, health: { (ok, reason) })
    }

    @Test func metricsServesTheRegistry() {
        registry.counter("haul_bytes_fetched_total", help: "Bytes.").add(10)
        let reply = endpoint().reply(method: "GET", path: "/metrics")
        #expect(reply.status == 200)
        #expect(reply.contentType == "text/plain; version=0.0.4; charset=utf-8")
        #expect(reply.body == registry.render())
        #expect(reply.body.contains("haul_bytes_fetched_total 10\n"))
    }

    @Test func healthyAndUnhealthy() {
        #expect(endpoint().reply(method: "GET", path: "/healthz") == .init(status: 200, contentType: "text/plain; charset=utf-8", body: "ok\n"))
        let sick = endpoint(ok: false, reason: "database unreachable\nfor 30s").reply(method: "GET", path: "/healthz")
        #expect(sick.status == 503)
        #expect(sick.body == "database unreachable for 30s\n")
        #expect(endpoint(ok: false).reply(method: "GET", path: "/healthz").body == "unhealthy\n")
    }

    @Test(arguments: ["/", "/metric", "/metrics/", "/healthz/x", "/favicon.ico", ""])
    func otherPathsAreNotFound(path: String) {
        #expect(endpoint().reply(method: "GET", path: path).status == 404)
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get"])
    func otherMethodsAreNotAllowed(method: String) {
        for path in ["/metrics", "/healthz"] {
            let reply = endpoint().reply(method: method, path: path)
            #expect(reply.status == 405)
            #expect(reply.allow == "GET, HEAD")
        }
    }

    @Test func headIsAnsweredLikeGet() {
        #expect(endpoint().reply(method: "HEAD", path: "/healthz").status == 200)
    }
}
