import Foundation
import HaulCore
import HaulMetrics
import HaulTestSupport
import Testing

@testable import HaulDashboard

/// The dashboard's login page on the real server, as `haul dashboard` runs it, while 70
/// connections trickle a request head one byte per 0.3 s from the same address.
@Suite(.serialized) struct DashboardSlowClientTests {
    @Test func loginAnswersWhileSeventyClientsTrickleHeaders() throws {
        let dashboard = Dashboard(
            auth: DashboardAuth(token: "op-token-for-tests-0123", key: Array(repeating: 5, count: 32)),
            pool: ConnectionPool(conninfo: "host=/nonexistent port=1 connect_timeout=1", keep: 1))
        let server = try serveOnFreePort { dashboard.handle($0) }
        defer { server.stop() }
        let tricklers = try Tricklers(count: 70, port: Int(server.address.port))
        defer { tricklers.stop() }
        Thread.sleep(forTimeInterval: 1.5)
        #expect(tricklers.opened >= 70)
        for source in ["127.0.0.1", "127.0.0.2"] {
            let result = try Run.program(
                "/usr/bin/curl",
                ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "3", "--interface", source, "--noproxy", "*", "http://\(server.address)/login"],
                timeout: 30)
            #expect(result.stdout == "200", "from \(source)")
        }
    }

    /// An `HTTPServer` as `haul dashboard` starts one (four threads), at a port that was free.
    func serveOnFreePort(_ handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws -> HTTPServer {
        let first = Int.random(in: 20_000...60_000)
        for port in first..<first + 200 {
            do {
                return try HTTPServer(address: MetricsAddress.parse("127.0.0.1:\(port)"), limits: .init(threads: 4), purpose: "the dashboard", handler: handler)
            } catch {
                if error.code == .metricsAddrInUse { continue }
                throw error
            }
        }
        throw TestFailure("no free port from \(first) on")
    }
}
