import HaulMetrics
import Testing

@testable import HaulDashboard

/// The router's checks, without a database: a request that gets past them reaches the pool,
/// which cannot connect here and answers 503, so a 403 or 401 proves nothing was read or changed.
@Suite struct RouterTests {
    static let now = 1_800_000_000.0
    let auth = DashboardAuth(token: "op-token", key: Array(repeating: 3, count: 32))
    var dashboard: Dashboard {
        Dashboard(auth: auth, pool: ConnectionPool(conninfo: "host=/nonexistent port=1 connect_timeout=1", keep: 1), clock: { Self.now })
    }
    let host = "127.0.0.1:9470"

    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: String = "") -> HTTPRequest {
        HTTPRequest(method: method, path: path, headers: ["Host": host].merging(headers) { $1 }, body: Array(body.utf8))
    }

    func loggedIn() -> (cookie: String, csrf: String) {
        let session = auth.newSession(now: Self.now, nonce: "t")
        return ("haul_session=\(session)", auth.csrfToken(session: session))
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
