import HaulDashboard
import Testing

@Suite struct AuthTests {
    let auth = DashboardAuth(token: "op-token", key: Array(repeating: 7, count: 32))
    let now = 1_800_000_000.0

    @Test func sessionsAreSignedAndExpire() {
        let session = auth.newSession(now: now, nonce: "abc")
        #expect(auth.validSession(session, now: now + 60))
        #expect(!auth.validSession(session, now: now + DashboardAuth.sessionLifetime + 1))
        var tampered = Array(session)
        tampered[0] = tampered[0] == "9" ? "8" : "9"
        #expect(!auth.validSession(String(tampered), now: now))
        #expect(!auth.validSession(session.replacingOccurrences(of: ".abc.", with: ".abd."), now: now))
        let otherProcess = DashboardAuth(token: "op-token", key: Array(repeating: 8, count: 32))
        #expect(!otherProcess.validSession(session, now: now))
        #expect(!auth.validSession("", now: now))
        #expect(!auth.validSession("a.b", now: now))
    }

    @Test func identityFromCookieOrBearer() {
        let session = auth.newSession(now: now, nonce: "n")
        #expect(auth.identify(cookie: "x=1; haul_session=\(session); y=2", authorization: nil, now: now) == .session(session))
        #expect(auth.identify(cookie: "haul_session=forged.1.2", authorization: nil, now: now) == .none)
        #expect(auth.identify(cookie: nil, authorization: "Bearer op-token", now: now) == .bearer)
        #expect(auth.identify(cookie: nil, authorization: "Bearer op-tokeN", now: now) == .none)
        #expect(auth.identify(cookie: nil, authorization: "Basic b3A6dG9rZW4=", now: now) == .none)
        let readOnly = DashboardAuth(token: nil, key: [1])
        #expect(readOnly.isReadOnly)
        #expect(readOnly.identify(cookie: nil, authorization: nil, now: now) == .anonymous)
        #expect(DashboardAuth(token: "", key: [1]).isReadOnly)
    }

    @Test func writesNeedCSRFAndOriginUnlessBearer() {
        let session = auth.newSession(now: now, nonce: "n")
        let csrf = auth.csrfToken(session: session)
        let me = "127.0.0.1:9470"
        #expect(auth.writeRefusal(identity: .session(session), csrf: csrf, origin: "http://\(me)", host: me) == nil)
        #expect(auth.writeRefusal(identity: .session(session), csrf: csrf, origin: "https://\(me)", host: me) == nil)
        #expect(auth.writeRefusal(identity: .session(session), csrf: csrf, origin: "http://evil.example", host: me)?.contains("cross-site") == true)
        #expect(auth.writeRefusal(identity: .session(session), csrf: csrf, origin: nil, host: me) != nil)
        #expect(auth.writeRefusal(identity: .session(session), csrf: csrf, origin: "null", host: me) != nil)
        #expect(auth.writeRefusal(identity: .session(session), csrf: nil, origin: "http://\(me)", host: me)?.contains("CSRF") == true)
        let other = auth.newSession(now: now, nonce: "m")
        #expect(auth.writeRefusal(identity: .session(session), csrf: auth.csrfToken(session: other), origin: "http://\(me)", host: me) != nil)
        #expect(auth.writeRefusal(identity: .bearer, csrf: nil, origin: nil, host: me) == nil)
        #expect(auth.writeRefusal(identity: .none, csrf: csrf, origin: "http://\(me)", host: me) != nil)
        #expect(auth.writeRefusal(identity: .anonymous, csrf: csrf, origin: "http://\(me)", host: me)?.contains("read-only") == true)
    }

    @Test func tokenFilesOthersCouldRewriteAreRefused() {
        typealias Owner = TokenRules.Owner
        let me: UInt32 = 1000
        func problem(_ file: Owner, _ folder: Owner) -> String? {
            TokenRules.fileProblem("/srv/token", file: file, folder: folder, folderPath: "/srv", user: me)
        }
        #expect(problem(Owner(uid: me, mode: 0o600), Owner(uid: me, mode: 0o700)) == nil)
        #expect(problem(Owner(uid: 0, mode: 0o644), Owner(uid: 0, mode: 0o755)) == nil, "root's file in root's folder")
        #expect(problem(Owner(uid: me, mode: 0o600), Owner(uid: 0, mode: 0o1777)) == nil, "a sticky folder such as /tmp")
        #expect(problem(Owner(uid: me, mode: 0o666), Owner(uid: me, mode: 0o700))?.contains("mode 0666") == true)
        #expect(problem(Owner(uid: me, mode: 0o620), Owner(uid: me, mode: 0o700))?.contains("can be written by other users") == true)
        #expect(problem(Owner(uid: 65534, mode: 0o600), Owner(uid: me, mode: 0o700))?.contains("belongs to user 65534") == true)
        #expect(problem(Owner(uid: me, mode: 0o600), Owner(uid: me, mode: 0o777))?.contains("other users can write") == true)
        #expect(problem(Owner(uid: me, mode: 0o600), Owner(uid: me, mode: 0o770))?.contains("other users can write") == true)
        #expect(problem(Owner(uid: me, mode: 0o600), Owner(uid: 65534, mode: 0o700))?.contains("of user 65534") == true)
        #expect(
            TokenRules.tokenProblem("x", source: "HAUL_DASHBOARD_TOKEN")
                == "the dashboard token in HAUL_DASHBOARD_TOKEN has 1 character, fewer than 16; use a long random one, such as the output of 'openssl rand -hex 24'"
        )
        #expect(TokenRules.tokenProblem(String(repeating: "a", count: 16), source: "x") == nil)
    }

    @Test func loopbackHostNames() {
        for host in ["127.0.0.1:9470", "localhost:9470", "[::1]:9470", "127.1.2.3:80", "localhost"] {
            #expect(DashboardAuth.loopbackHost(host), "\(host)")
        }
        for host in ["evil.example:9470", "127.0.0.1.evil.example:9470", "127.evil.x.y:9470", "10.0.0.1:9470", "[::2]:9470", "", "localhost.evil:1"] {
            #expect(!DashboardAuth.loopbackHost(host), "\(host)")
        }
        #expect(!DashboardAuth.loopbackHost(nil))
    }

    @Test func cookiesAreHttpOnlyAndStrict() {
        let cookie = DashboardAuth.sessionCookie("v")
        #expect(cookie.hasPrefix("haul_session=v;"))
        #expect(cookie.contains("HttpOnly"))
        #expect(cookie.contains("SameSite=Strict"))
        #expect(DashboardAuth.clearedCookie.contains("Max-Age=0"))
        #expect(DashboardAuth.cookieValue("a=1;haul_session=x", name: "haul_session") == "x")
        #expect(DashboardAuth.cookieValue("haul_session_other=x", name: "haul_session") == nil)
    }
}
