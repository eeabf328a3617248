import HaulMetrics
import Synchronization
import Testing

@testable import HaulDashboard

/// The router's checks, without a database: a request that gets past them reaches the pool,
/// which cannot connect here and answers 503, so a 403 or 401 proves nothing was read or changed.
@Suite struct RouterTests {
    static let now = 1_800_000_000.0
    let auth = DashboardAuth(token: "op-token", key: Array(repeating: 3, count: 32))
    /// The dashboard's time, which the throttle tests move on.
    let clock = TestClock(Self.now)
    let dashboard: Dashboard
    let host = "127.0.0.1:9470"

    init() {
        let clock = self.clock
        dashboard = Dashboard(
            auth: auth, pool: ConnectionPool(conninfo: "host=/nonexistent port=1 connect_timeout=1", keep: 1), clock: { clock.now },
            sleep: { clock.advance($0) })
    }

    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: String = "", from client: String = "127.0.0.1") -> HTTPRequest {
        HTTPRequest(method: method, path: path, headers: ["Host": host].merging(headers) { $1 }, body: Array(body.utf8), clientAddress: client)
    }

    /// Logs in through the form and returns the cookie (`name=value`) and its CSRF token.
    func loggedIn() -> (cookie: String, csrf: String) {
        let reply = dashboard.handle(request("POST", "/login", headers: ["Origin": "http://\(host)"], body: "token=op-token"))
        let cookie = String((reply.header("Set-Cookie") ?? "").split(separator: ";")[0])
        let session = String(cookie.dropFirst("haul_session=".count))
        return (cookie, auth.csrfToken(session: session))
    }

    @Test func everyResponseCarriesTheSecurityHeaders() {
        for path in ["/", "/login", "/static/app.js", "/api/transfers", "/nope"] {
            let response = dashboard.handle(request("GET", path))
            let policy = response.header("Content-Security-Policy") ?? ""
            #expect(policy.contains("script-src 'self'"), "\(path)")
            #expect(!policy.contains("unsafe-inline"), "\(path)")
            #expect(policy.contains("frame-ancestors 'none'"), "\(path)")
            #expect(response.header("X-Frame-Options") == "DENY", "\(path)")
            #expect(response.header("X-Content-Type-Options") == "nosniff", "\(path)")
        }
    }

    @Test func strangersAreSentToTheLoginForm() {
        let page = dashboard.handle(request("GET", "/transfers"))
        #expect(page.status == 303)
        #expect(page.header("Location") == "/login")
        #expect(dashboard.handle(request("GET", "/api/transfers")).status == 401)
        #expect(dashboard.handle(request("POST", "/api/transfers/1/cancel", headers: ["Origin": "http://\(host)"])).status == 401)
        let form = dashboard.handle(request("GET", "/login"))
        #expect(form.status == 200)
        #expect(form.text.contains("name=\"token\""))
    }

    @Test func loginSetsAStrictHttpOnlyCookie() {
        let wrong = dashboard.handle(request("POST", "/login", headers: ["Origin": "http://\(host)"], body: "token=nope"))
        #expect(wrong.status == 401)
        #expect(wrong.header("Set-Cookie") == nil)
        let right = dashboard.handle(request("POST", "/login", headers: ["Origin": "http://\(host)"], body: "token=op-token"))
        #expect(right.status == 303)
        let cookie = right.header("Set-Cookie") ?? ""
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        let value = String(cookie.split(separator: ";")[0])
        #expect(auth.identify(cookie: value, authorization: nil, now: Self.now) != .none)
        #expect(dashboard.handle(request("GET", "/transfers", headers: ["Cookie": value])).status == 503, "the session is live")
        let crossSite = dashboard.handle(request("POST", "/login", headers: ["Origin": "http://evil.example"], body: "token=op-token"))
        #expect(crossSite.status == 403)
        #expect(crossSite.header("Set-Cookie") == nil)
    }

    @Test func forgedPostsAreRefusedBeforeTheDatabase() {
        let (cookie, csrf) = loggedIn()
        let crossSite = dashboard.handle(
            request("POST", "/api/transfers/1/cancel", headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:8080", "X-CSRF-Token": csrf]))
        #expect(crossSite.status == 403)
        let noToken = dashboard.handle(request("POST", "/api/transfers/1/cancel", headers: ["Cookie": cookie, "Origin": "http://\(host)"]))
        #expect(noToken.status == 403)
        let badForm = dashboard.handle(
            request("POST", "/api/transfers/1/cancel", headers: ["Cookie": cookie, "Origin": "http://\(host)"], body: "csrf=0000&return=/transfers"))
        #expect(badForm.status == 403)
        #expect(badForm.text.contains("CSRF"))
        // With both, the request reaches the (here unreachable) database.
        let genuine = dashboard.handle(
            request("POST", "/api/transfers/1/cancel", headers: ["Cookie": cookie, "Origin": "http://\(host)", "X-CSRF-Token": csrf]))
        #expect(genuine.status == 503)
        let bearer = dashboard.handle(request("POST", "/api/transfers/1/cancel", headers: ["Authorization": "Bearer op-token"]))
        #expect(bearer.status == 503)
    }

    @Test func aDashboardWithoutTokenIsReadOnlyAndLoopbackOnly() {
        let readOnly = Dashboard(
            auth: DashboardAuth(token: nil, key: [1]), pool: ConnectionPool(conninfo: "host=/nonexistent port=1 connect_timeout=1", keep: 1))
        let rebound = readOnly.handle(HTTPRequest(method: "GET", path: "/", headers: ["Host": "attacker.example:9470"]))
        #expect(rebound.status == 403)
        let post = readOnly.handle(HTTPRequest(method: "POST", path: "/api/transfers/1/cancel", headers: ["Host": host, "Origin": "http://\(host)"]))
        #expect(post.status == 403)
        #expect(post.text.contains("read-only"))
        #expect(readOnly.handle(HTTPRequest(method: "GET", path: "/login", headers: ["Host": host])).status == 303)
    }

    @Test func assetsAndPaths() {
        let script = dashboard.handle(request("GET", "/static/app.js"))
        #expect(script.status == 200)
        #expect(script.header("Content-Type")?.hasPrefix("text/javascript") == true)
        #expect(!script.text.contains("innerHTML"))
        #expect(dashboard.handle(request("GET", "/static/app.css")).status == 200)
        #expect(dashboard.handle(request("GET", "/static/../../etc/passwd")).status != 200)
        #expect(Dashboard.localPath("/transfers?state=failed") == "/transfers?state=failed")
        #expect(Dashboard.localPath("//evil.example/") == nil)
        #expect(Dashboard.localPath("https://evil.example/") == nil)
        #expect(Dashboard.localPath("/\\evil") == nil)
        #expect(Dashboard.localPath("//\u{301}evil.example/") == nil, "a combining mark does not hide the second slash")
        #expect(Dashboard.localPath("/\\\u{301}evil.example/") == nil, "nor the backslash")
        #expect(Dashboard.localPath("/\u{301}/x") == "/\u{301}/x")
    }

    @Test func returnPathsThatLeaveThisServerAreRefused() {
        for hostile in [
            "/%09/evil.example", "//evil", "/\\evil", "/%2F%2Fevil", "/%2f/evil", "https://evil", "/%0d%0a", "/x%0d%0aSet-Cookie:a=b",
            "/%5Cevil", "/%255C%255Cevil", "/%252F%252Fevil", "/\t/evil.example", "/a//b", "/%7F", "", "evil", "javascript:alert(1)",
            "%2F%2Fevil", "/%2525252F%2525252Fevil",
        ] {
            #expect(Dashboard.localPath(hostile) == nil, "\(hostile)")
        }
        for own in ["/", "/transfers", "/transfers?state=failed&page=2", "/transfers/12", "/hosts", "/batches?name=a%20b"] {
            #expect(Dashboard.localPath(own) == own, "\(own)")
        }
    }

    @Test func loggingOutEndsTheSessionOnTheServer() {
        let (cookie, csrf) = loggedIn()
        let origin = "http://\(host)"
        // Logged in: the page answers (503 here: it reached the unreachable database).
        #expect(dashboard.handle(request("GET", "/transfers", headers: ["Cookie": cookie])).status == 503)
        let logout = dashboard.handle(request("POST", "/logout", headers: ["Cookie": cookie, "Origin": origin], body: "csrf=\(csrf)&return=/"))
        #expect(logout.status == 303)
        let again = dashboard.handle(request("GET", "/transfers", headers: ["Cookie": cookie]))
        #expect(again.status == 303)
        #expect(again.header("Location") == "/login")
        let post = dashboard.handle(request("POST", "/api/transfers/1/cancel", headers: ["Cookie": cookie, "Origin": origin, "X-CSRF-Token": csrf]))
        #expect(post.status == 401)
        // A cookie this process signed but never started (or that another process started) is no session either.
        let unstarted = "haul_session=" + auth.newSession(now: Self.now, nonce: "never-logged-in")
        #expect(dashboard.handle(request("GET", "/transfers", headers: ["Cookie": unstarted])).status == 303)
        // Other sessions live on.
        let other = loggedIn()
        #expect(dashboard.handle(request("GET", "/transfers", headers: ["Cookie": other.cookie])).status == 503)
    }

    /// 200 wrong tokens from one address, one after another as a guessing client sends them:
    /// the dashboard holds each after the fifth until 0.1 s after the last, so its clock (the
    /// test's, moved only by the dashboard's own waits) moves at least 10 s; then the right
    /// token still works from that address. Before 2026-12-06 the guesses were answered 429
    /// at once, and the right token refused for 30 s, so a client could not tell a slow
    /// server from a locked one.
    @Test func twoHundredWrongGuessesTakeAtLeastTenSecondsAndTheRightTokenWorksAfter() {
        let origin = ["Origin": "http://\(host)"]
        let start = clock.now
        for guess in 0..<200 {
            // Bearer guesses are guesses too, and share the address's record.
            let reply =
                guess.isMultiple(of: 2)
                ? dashboard.handle(request("POST", "/login", headers: origin, body: "token=guess\(guess)", from: "192.0.2.7"))
                : dashboard.handle(request("GET", "/api/transfers", headers: ["Authorization": "Bearer guess\(guess)"], from: "192.0.2.7"))
            #expect(reply.status == 401, "guess \(guess)")
        }
        #expect(clock.now - start >= 10)
        // Another address is not slowed.
        let other = clock.now
        #expect(dashboard.handle(request("POST", "/login", headers: origin, body: "token=nope", from: "192.0.2.8")).status == 401)
        #expect(dashboard.handle(request("POST", "/login", headers: origin, body: "token=op-token", from: "192.0.2.8")).status == 303)
        #expect(dashboard.handle(request("GET", "/api/transfers", headers: ["Authorization": "Bearer op-token"], from: "192.0.2.9")).status == 503)
        #expect(clock.now == other)
        // The right token works from the guessing address, held like a guess; then it starts afresh.
        #expect(dashboard.handle(request("POST", "/login", headers: origin, body: "token=op-token", from: "192.0.2.7")).status == 303)
        let afresh = clock.now
        #expect(dashboard.handle(request("POST", "/login", headers: origin, body: "token=typo", from: "192.0.2.7")).status == 401)
        #expect(clock.now == afresh)
    }

    /// While one token of a slowed address is held or examined, another from that address (a
    /// second connection) is refused unexamined, so parallel guessing gains nothing.
    @Test func aSlowedAddressHasOneTokenExaminedAtATime() {
        var throttle = LoginThrottle()
        for _ in 0..<LoginThrottle.freeFailures {
            #expect(throttle.admit("192.0.2.7", now: Self.now) == .now)
            throttle.failed("192.0.2.7", now: Self.now)
        }
        guard case .after(let wait) = throttle.admit("192.0.2.7", now: Self.now + 0.04) else {
            Issue.record("the sixth token is not held")
            return
        }
        #expect(abs(wait - (LoginThrottle.delay - 0.04)) < 1e-6)
        #expect(throttle.admit("192.0.2.7", now: Self.now + 0.05) == .busy)
        #expect(throttle.admit("2001:db8::1", now: Self.now + 0.05) == .now)
        throttle.failed("192.0.2.7", now: Self.now + 0.1)
        #expect(throttle.admit("192.0.2.7", now: Self.now + 0.3) == .now)
        #expect(throttle.admit("192.0.2.7", now: Self.now + 0.3) == .busy)
        throttle.succeeded("192.0.2.7")
        #expect(throttle.admit("192.0.2.7", now: Self.now + 0.3) == .now)
        #expect(throttle.admit("192.0.2.7", now: Self.now + 0.3) == .now)
    }

    @Test func absurdPagesAreClamped() {
        #expect(Reader.paging([:]) == (1, 50, 0))
        #expect(Reader.paging(["page": "3", "per": "20"]) == (3, 20, 40))
        #expect(Reader.paging(["page": "-5", "per": "0"]) == (1, 1, 0))
        #expect(Reader.paging(["per": "99999999999999999999"]) == (1, 50, 0))
        let huge = Reader.paging(["page": "9223372036854775807", "per": "200"])
        #expect(huge.page == Reader.maxPage)
        #expect(huge.offset == (Reader.maxPage - 1) * 200)
    }

    @Test func pollingIsAsCheapAsHaulWait() {
        #expect(Reader.pollAfter(0.001) == 1000)
        #expect(Reader.pollAfter(0.3) == 3000)
        #expect(Reader.pollAfter(5) == 10_000)
    }
}

/// A clock that tests move on by hand.
final class TestClock: Sendable {
    private let time: Mutex<Double>
    init(_ start: Double) { time = Mutex(start) }
    var now: Double { time.withLock { $0 } }
    func advance(_ seconds: Double) { time.withLock { $0 += seconds } }
}
