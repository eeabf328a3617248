import Foundation
import HaulCore
import HaulTestSupport
import Testing

@testable import HaulMetrics

/// Slow clients against the real libmicrohttpd server: 70 connections that trickle a request
/// head one byte per 0.3 s from the probe's own address must not keep `/healthz` from
/// answering (as Kubernetes' liveness probe, with its few seconds of timeout).
@Suite(.serialized) struct SlowClientTests {
    @Test func healthzAnswersWhileSeventyClientsTrickleHeaders() throws {
        let server = try startServerOnFreePort(MetricsRegistry())
        defer { server.stop() }
        let tricklers = try Tricklers(count: 70, port: Int(server.address.port))
        defer { tricklers.stop() }
        Thread.sleep(forTimeInterval: 1.5)
        #expect(tricklers.opened >= 70)
        for source in ["127.0.0.1", "127.0.0.2", "127.0.0.1"] {
            #expect(try probe("http://\(server.address)/healthz", from: source) == "200", "from \(source)")
        }
    }

    @Test func aRequestTrickledPastItsDeadlineIsCut() throws {
        var limits = HTTPServer.Limits(threads: 1)
        limits.requestDeadlineSeconds = 1
        let server = try startHTTPServerOnFreePort(limits) { _ in HTTPResponse(status: 200, contentType: "text/plain", body: "ok\n") }
        defer { server.stop() }
        let trickler = try Tricklers(count: 1, port: Int(server.address.port))
        defer { trickler.stop() }
        // Four deadlines: libmicrohttpd's own idle timeout (10 s) restarts at every byte and would never cut it.
        Thread.sleep(forTimeInterval: 4)
        #expect(trickler.closed >= 1)
        #expect(try probe("http://\(server.address)/", from: "127.0.0.1") == "200")
    }

    @Test func theConnectionThatWaitedLongestMakesRoom() {
        var table = ConnectionGuard(limits: .init(perAddress: 2, total: 3, requestDeadline: 5))
        #expect(table.opened(10, address: "a", now: 0) == [])
        #expect(table.opened(11, address: "a", now: 1) == [])
        table.answering(11)
        #expect(table.opened(12, address: "a", now: 2) == [10], "10 waited longest")
        table.closed(10)
        #expect(table.opened(13, address: "a", now: 3) == [12], "11 is being answered")
        table.closed(12)
        table.answering(13)
        #expect(table.opened(14, address: "a", now: 4) == [14], "all others are being answered: the newcomer goes")
        table.closed(14)
        #expect(table.opened(20, address: "b", now: 5) == [], "another address has room")
        #expect(table.opened(21, address: "c", now: 6) == [20], "over the total: the longest waiting of all")
        table.closed(20)
        table.answered(13, now: 7)
        #expect(table.overdue(now: 10.9) == [])
        #expect(table.overdue(now: 11) == [21])
        #expect(table.overdue(now: 11.5) == [], "already being closed")
        #expect(table.overdue(now: 12) == [13], "its next request is due 5 s after its answer")
        #expect(table.overdue(now: 100) == [], "11 is being answered")
    }

    /// The HTTP status `curl` got from `url` from source address `source`, in at most 3 s.
    func probe(_ url: String, from source: String) throws -> String {
        let result = try Run.program(
            "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "3", "--interface", source, "--noproxy", "*", url], timeout: 30)
        return result.stdout
    }

    func startHTTPServerOnFreePort(_ limits: HTTPServer.Limits, handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws -> HTTPServer {
        let first = Int.random(in: 20_000...60_000)
        for port in first..<first + 200 {
            do {
                return try HTTPServer(address: MetricsAddress.parse("127.0.0.1:\(port)"), limits: limits, handler: handler)
            } catch {
                if error.code == .metricsAddrInUse { continue }
                throw error
            }
        }
        throw TestFailure("no free port from \(first) on")
    }
}
