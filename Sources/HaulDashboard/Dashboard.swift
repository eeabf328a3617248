import Foundation
import HaulCore
import HaulMetrics
import HaulPostgres
import HaulQueue
import Synchronization

/// The operator dashboard: routes each request to a page, a JSON answer or an action, after
/// the checks of `DashboardAuth`. Runs on the HTTP server's threads; thread-safe.
public final class Dashboard: Sendable {
    let auth: DashboardAuth
    let pool: ConnectionPool
    let clock: @Sendable () -> Double
    let sleep: @Sendable (Double) -> Void
    let sessions = SessionStore()
    let throttle = Mutex(LoginThrottle())

    /// Serves through `pool` with the checks of `auth`; `clock` gives Unix seconds and `sleep`
    /// waits that many seconds (tests set both: their sleep moves their clock).
    public init(
        auth: DashboardAuth, pool: ConnectionPool, clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }
    ) {
        self.auth = auth
        self.pool = pool
        self.clock = clock
        self.sleep = sleep
    }

    /// Transfers per page unless `per` says otherwise (at most `maxPerPage`).
    static let perPage = 50
    static let maxPerPage = 200

    /// Answers one request, with the security header fields on every response.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        var response = route(request)
        response.headers += Self.securityHeaders
        return response
    }

    /// Sent with every response: no script or style from anywhere but this server, no framing,
    /// no sniffing, no referrer to other sites, no caching of pages that show the fleet.
    static let securityHeaders = [
        HTTPResponse.Header(
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        ),
        HTTPResponse.Header("X-Frame-Options", "DENY"),
        HTTPResponse.Header("X-Content-Type-Options", "nosniff"),
        // Not no-referrer: under it a browser sends `Origin: null` with its own form posts, which the Origin check must refuse.
        HTTPResponse.Header("Referrer-Policy", "same-origin"),
        HTTPResponse.Header("Cache-Control", "no-store"),
    ]

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        if auth.isReadOnly && !DashboardAuth.loopbackHost(request.header("host")) {
            return Reply.text(403, "a dashboard without a token answers only to loopback host names (127.0.0.1, localhost, [::1])\n")
        }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if parts.first == "static", parts.count == 2, request.method == "GET" || request.method == "HEAD" {
            return Assets.response(parts[1])
        }
        if parts == ["login"] { return login(request) }
        let isAPI = parts.first == "api"
        let identity: DashboardAuth.Identity
        switch self.identity(request) {
        case .success(let known): identity = known
        case .failure(let wait): return tooManyTries(wait, api: isAPI)
        }
        if identity == .none {
            return isAPI ? Reply.json(401, ["ok": false, "error": "not logged in: send Authorization: Bearer TOKEN"]) : Reply.redirect("/login")
        }
        if request.method == "POST" {
            if request.bodyTooLarge { return Reply.text(413, "request body too large\n") }
            let form = HTML.formFields(request.body)
            if let refusal = auth.writeRefusal(
                identity: identity, csrf: request.header("x-csrf-token") ?? form["csrf"], origin: request.header("origin"), host: request.header("host"))
            {
                return form["return"] == nil ? Reply.json(403, ["ok": false, "error": refusal]) : Reply.page(403, Pages.message("Refused", refusal))
            }
            if parts == ["logout"] {
                if case .session(let session) = identity { sessions.end(session) }
                return Reply.redirect("/login", cookie: DashboardAuth.clearedCookie)
            }
            guard isAPI else { return Reply.text(404, "not found\n") }
            return act(Array(parts.dropFirst()), form: form)
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return Reply.text(405, "method \(request.method) not allowed\n", headers: [HTTPResponse.Header("Allow", "GET, HEAD, POST")])
        }
        let view = PageContext(identity: identity, csrf: csrf(identity), readOnly: auth.isReadOnly)
        return read(parts, query: request.query, view: view)
    }

    /// Who sent `request`: a bearer token is a guess at the token like a login, so it is
    /// throttled per client address in the same way (the failure: it was refused unexamined); a
    /// session cookie counts only while its session is live on this server.
    private func identity(_ request: HTTPRequest) -> Result<DashboardAuth.Identity, Wait> {
        let authorization = request.header("authorization")
        let bearer = authorization?.hasPrefix("Bearer ") == true && !auth.isReadOnly
        if bearer, !admit(request.clientAddress) { return .failure(Wait(seconds: 1)) }
        let now = clock()
        let identity = auth.identify(cookie: request.header("cookie"), authorization: authorization, now: now)
        switch identity {
        case .bearer: throttle.withLock { $0.succeeded(request.clientAddress) }
        case .none where bearer: throttle.withLock { $0.failed(request.clientAddress, now: now) }
        case .session(let session) where !sessions.isLive(session, now: now): return .success(.none)
        default: break
        }
        return .success(identity)
    }

    /// Whether a token from `address` may be examined: after holding the request as long as
    /// the throttle says (`LoginThrottle`), or never, when another of its tokens is held.
    private func admit(_ address: String) -> Bool {
        switch throttle.withLock({ $0.admit(address, now: clock()) }) {
        case .now: return true
        case .after(let seconds):
            sleep(seconds)
            return true
        case .busy: return false
        }
    }

    /// Seconds a client address should wait before sending its next token.
    struct Wait: Error {
        let seconds: Double
    }

    /// 429 with `Retry-After` (whole seconds, rounded up) for a throttled address.
    private func tooManyTries(_ wait: Wait, api: Bool) -> HTTPResponse {
        let seconds = Int(wait.seconds.rounded(.up))
        let text = "another token from your address is being examined: wait \(seconds) s before trying again"
        var response = api ? Reply.json(429, ["ok": false, "code": "too-many-tries", "error": text]) : Reply.page(429, Pages.login(error: text))
        response.headers.append(HTTPResponse.Header("Retry-After", String(seconds)))
        return response
    }

    private func csrf(_ identity: DashboardAuth.Identity) -> String? {
        if case .session(let session) = identity { return auth.csrfToken(session: session) }
        return nil
    }

    /// `GET /login` shows the form; `POST /login` with the right `token` starts a session.
    private func login(_ request: HTTPRequest) -> HTTPResponse {
        guard !auth.isReadOnly else { return Reply.redirect("/") }
        if request.method != "POST" { return Reply.page(200, Pages.login(error: nil)) }
        if let origin = request.header("origin"), !DashboardAuth.originMatches(origin, host: request.header("host")) {
            return Reply.page(403, Pages.message("Refused", "cross-site login refused"))
        }
        guard admit(request.clientAddress) else { return tooManyTries(Wait(seconds: 1), api: false) }
        let now = clock()
        let form = HTML.formFields(request.body)
        guard let token = form["token"], auth.tokenMatches(token) else {
            throttle.withLock { $0.failed(request.clientAddress, now: now) }
            return Reply.page(401, Pages.login(error: "That is not the dashboard token."))
        }
        throttle.withLock { $0.succeeded(request.clientAddress) }
        var nonce = SystemRandomNumberGenerator()
        let session = auth.newSession(now: now, nonce: String(nonce.next(), radix: 36) + String(nonce.next(), radix: 36))
        sessions.start(session, expiry: now + DashboardAuth.sessionLifetime, now: now)
        return Reply.redirect("/", cookie: DashboardAuth.sessionCookie(session))
    }

    /// GET pages and JSON.
    private func read(_ parts: [String], query: [String: String], view: PageContext) -> HTTPResponse {
        do {
            return try pool.with { db in
                let reader = Reader(db: db, query: query)
                switch parts {
                case []: return Reply.page(200, Pages.overview(try reader.overview(), view: view))
                case ["api", "ping"]:
                    _ = try db.query("SELECT 1")
                    return Reply.json(200, ["ok": true, "poll_after_ms": 2000])
                case ["api", "overview"]: return Reply.json(200, try reader.overview().json)
                case ["transfers"]: return Reply.page(200, TransferPages.list(try reader.transfers(), view: view))
                case ["api", "transfers"]: return Reply.json(200, try reader.transfers().json)
                case ["batches"]: return Reply.page(200, Pages.batches(try FleetView(db).batches(), view: view))
                case ["api", "batches"]: return Reply.json(200, JSON.batches(try FleetView(db).batches()))
                case let path where path.count == 2 && path[0] == "batches":
                    guard let batch = try reader.batch(path[1]) else {
                        return Reply.page(404, Pages.message("Not found", "There is no batch \(path[1])."))
                    }
                    return Reply.page(200, BatchPages.page(batch, view: view))
                case let path where path.count == 3 && path[0] == "api" && path[1] == "batches":
                    guard let batch = try reader.batch(path[2]) else {
                        return Reply.json(404, ["ok": false, "code": HaulError.Code.noSuchBatch.rawValue, "error": "there is no batch \(path[2])"])
                    }
                    return Reply.json(200, JSON.batch(batch))
                case ["workers"]:
                    return Reply.page(
                        200,
                        Pages.workers(
                            try FleetView(db).workers(includeStopped: query["all"] != nil), throughput: try reader.throughputBy(.worker),
                            window: reader.window, view: view))
                case ["api", "workers"]: return Reply.json(200, try FleetView(db).workers(includeStopped: query["all"] != nil).map(\.json))
                case ["hosts"]:
                    return Reply.page(
                        200, Pages.hosts(try FleetView(db).hostLoads(), throughput: try reader.throughputBy(.host), window: reader.window, view: view))
                case ["api", "hosts"]: return Reply.json(200, JSON.hosts(try FleetView(db).hostLoads()))
                case let path where path.count == 2 && path[0] == "transfers", let path where path.count == 3 && path[0] == "api" && path[1] == "transfers":
                    guard let id = Int64(path.last!), let detail = try reader.transfer(id) else {
                        return path[0] == "api"
                            ? Reply.json(404, ["ok": false, "code": HaulError.Code.noSuchTransfer.rawValue, "error": "there is no transfer \(path.last!)"])
                            : Reply.page(404, Pages.message("Not found", "There is no transfer \(path.last!)."))
                    }
                    return path[0] == "api" ? Reply.json(200, detail.json) : Reply.page(200, TransferPages.detail(detail, view: view))
                default:
                    return Reply.text(404, "not found\n")
                }
            }
        } catch {
            // A page gets the dashboard's own page, which keeps asking (app.js) until the database is back.
            return parts.first == "api"
                ? Reply.json(503, ["ok": false, "code": HaulError.Code.database.rawValue, "error": Self.describe(error)])
                : Reply.page(503, Pages.outage(Self.describe(error)))
        }
    }

    /// POST /api/…: the operator actions, with the CLI's refusals and messages.
    private func act(_ parts: [String], form: [String: String]) -> HTTPResponse {
        let back = form["return"].flatMap(Self.localPath)
        if let back, form["confirmed"] == nil, parts.count == 3, parts[0] == "batches", let action = OperatorAction(rawValue: parts[2]) {
            return confirmation(batch: parts[1], action, csrf: form["csrf"] ?? "", back: back)
        }
        do {
            let message: String = try pool.with { db in
                switch parts {
                case let path where path.count == 3 && path[0] == "transfers":
                    guard let id = Int64(path[1]), let action = OperatorAction(rawValue: path[2]) else { throw Self.notFound }
                    try TransferStore(db).apply(action, to: id)
                    return "transfer \(id): \(action.rawValue) done"
                case let path where path.count == 2 && path[0] == "bulk":
                    guard let action = OperatorAction(rawValue: path[1]) else { throw Self.notFound }
                    let ids = (form["ids"] ?? "").split(separator: ",").compactMap { Int64($0) }
                    guard !ids.isEmpty, ids.count <= Self.maxBulk else {
                        throw HaulError.usage("send ids=ID,ID,… (1 to \(Self.maxBulk) transfer ids)")
                    }
                    let outcome = try TransferStore(db).apply(action, to: ids)
                    return "\(action.rawValue) done for \(outcome.changed.count) transfers, \(ids.count - outcome.changed.count) left as they were"
                case let path where path.count == 3 && path[0] == "batches":
                    guard let action = OperatorAction(rawValue: path[2]) else { throw Self.notFound }
                    let outcome = try TransferStore(db).apply(action, toBatch: path[1])
                    return "batch \(path[1]): \(action.rawValue) done for \(outcome.applied) transfers, \(outcome.skipped) left as they were"
                case let path where path.count == 3 && path[0] == "hosts" && path[2] == "limit":
                    let (host, limit) = try HostLimits.parse(host: path[1], limit: form["limit"] ?? "")
                    try HostLimits.set(db, host: host, limit: limit)
                    return HostLimits.describe(host: host, limit: limit)
                case let path where path.count == 3 && path[0] == "hosts" && path[2] == "pause":
                    let host = try HostLimits.parse(host: path[1])
                    try HostLimits.set(db, host: host, limit: 0)
                    return HostLimits.describe(host: host, limit: 0)
                case let path where path.count == 3 && path[0] == "hosts" && path[2] == "resume":
                    let host = try HostLimits.parse(host: path[1])
                    guard let limit = try HostLimits.resume(db, host: host) else { return "\(host) was not paused; nothing changed" }
                    return "\(host): resumed, at most \(HostLimits.segments(limit))"
                default:
                    throw Self.notFound
                }
            }
            if let back { return Reply.redirect(back) }
            return Reply.json(200, ["ok": true, "message": message])
        } catch let error as HaulError {
            let status: UInt32 =
                switch error.code {
                case .notFound, .noSuchTransfer, .noSuchBatch: 404
                case .usage: 400
                case .invalidTransition, .conflict: 409
                default: 500
                }
            if back != nil { return Reply.page(status, Pages.message("Refused", error.description, back: back)) }
            return Reply.json(status, ["ok": false, "code": error.code.rawValue, "error": error.description])
        } catch {
            return Reply.json(503, ["ok": false, "code": HaulError.Code.database.rawValue, "error": Self.describe(error)])
        }
    }

    /// A form's batch action without JavaScript (app.js asks with `confirm` and posts no
    /// `return`): a page that names how many transfers it would change and asks again.
    private func confirmation(batch name: String, _ action: OperatorAction, csrf: String, back: String) -> HTTPResponse {
        do {
            guard let summary = try pool.with({ try Batches($0).summary(name) }) else {
                return Reply.page(404, Pages.message("Not found", "There is no batch \(name).", back: back))
            }
            let touched = Pages.touched(action, counts: summary.countsByState)
            return Reply.page(200, Pages.confirm(batch: name, action, touched: touched, csrf: csrf, back: back))
        } catch {
            return Reply.page(503, Pages.outage(Self.describe(error)))
        }
    }

    /// The most transfers one bulk action names (a page shows at most `maxPerPage`).
    static let maxBulk = 1000

    private static let notFound = HaulError(
        .notFound, "no such action",
        hint: "POST /api/transfers/ID/ACTION, /api/bulk/ACTION (ids=…), /api/batches/NAME/ACTION or /api/hosts/HOST/limit|pause|resume")

    /// A path on this server (`/…`, never `//host…`) to send a form's browser back to, or nil.
    ///
    /// `text` and each percent-decoding of it (browsers drop tabs and line breaks from a
    /// `Location` and some decode it, so `/%09/evil.example` would become `//evil.example`)
    /// must be `/` alone or `/` then a byte that is neither `/` nor `\`, and hold no control
    /// byte (tab and line breaks included), no backslash and no `//`. Starting with a single
    /// `/`, it can hold no scheme. Judged by bytes: as `Character`s, `/` then `/` with a
    /// combining mark is not `//` (see `PathText`).
    static func localPath(_ text: String) -> String? {
        var bytes = Array(text.utf8)
        for _ in 0..<4 {
            guard localBytes(bytes) else { return nil }
            let decoded = percentDecoded(bytes)
            if decoded == bytes { return text }
            bytes = decoded
        }
        return nil
    }

    private static func localBytes(_ bytes: [UInt8]) -> Bool {
        let slash = UInt8(ascii: "/")
        let backslash = UInt8(ascii: "\\")
        guard bytes.first == slash, bytes.count == 1 || bytes[1] != slash && bytes[1] != backslash else { return false }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == backslash }) else { return false }
        return !zip(bytes, bytes.dropFirst()).contains { $0 == slash && $1 == slash }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `%XX` sequences replaced by their byte; anything else kept.
    private static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                result.append(high << 4 | low)
                index += 3
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    static func describe(_ error: Error) -> String {
        if let error = error as? PostgresError { return "database error: \(error.description)" }
        if let error = error as? HaulError { return error.description }
        return "\(error)"
    }
}
