import CCrypto
import HaulCore

/// Who may read and who may change things, decided from request headers only (pure, no I/O).
///
/// With a token configured, a browser logs in once with it and then carries a session cookie:
/// `expiry.nonce.mac`, where `mac` is an HMAC-SHA256 under a key drawn at start-up, so a forged
/// or foreign cookie is refused here and sessions end when the dashboard restarts; `Dashboard`
/// also keeps the live ones (`SessionStore`), so that logging out ends a session for good.
/// The CSRF token of a session is another MAC of the session value. API clients send `Authorization: Bearer TOKEN` instead; a bearer
/// request cannot be forged by another site, so it needs no CSRF token or Origin.
/// Without a token everyone may read and nobody may change anything.
public struct DashboardAuth: Sendable {
    /// The operator token; nil: read-only dashboard.
    public let token: String?
    /// The MAC key of sessions and CSRF tokens.
    let key: [UInt8]

    /// The session cookie's name.
    public static let cookieName = "haul_session"
    /// Seconds a session lasts.
    public static let sessionLifetime: Double = 12 * 3600

    /// `key` should be 32 random bytes, drawn once per process.
    public init(token: String?, key: [UInt8]) {
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        self.key = key
    }

    /// Whether nothing may be changed (no token configured).
    public var isReadOnly: Bool { token == nil }

    /// Who sent a request.
    public enum Identity: Equatable, Sendable {
        /// Read-only dashboard: anyone (it only listens on loopback).
        case anonymous
        /// A browser with a valid session cookie (the cookie's value).
        case session(String)
        /// An API client that sent the token as a bearer token.
        case bearer
        /// Nobody known: log in first.
        case none
    }

    /// Identifies a request from its `Cookie` and `Authorization` header fields at time `now` (Unix seconds).
    public func identify(cookie: String?, authorization: String?, now: Double) -> Identity {
        guard let token else { return .anonymous }
        if let authorization, authorization.hasPrefix("Bearer ") {
            return constantTimeEqual(String(authorization.dropFirst(7)), token) ? .bearer : .none
        }
        if let value = Self.cookieValue(cookie, name: Self.cookieName), validSession(value, now: now) { return .session(value) }
        return .none
    }

    /// Whether `presented` is the token (compared in constant time).
    public func tokenMatches(_ presented: String) -> Bool {
        guard let token else { return false }
        return constantTimeEqual(presented, token)
    }

    /// A new session cookie value valid until `now + sessionLifetime`; `nonce` makes it unique.
    public func newSession(now: Double, nonce: String) -> String {
        let body = "\(Int64(now + Self.sessionLifetime)).\(nonce)"
        return body + "." + mac("session:" + body)
    }

    /// Whether `value` is a session this process issued that has not expired.
    public func validSession(_ value: String, now: Double) -> Bool {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let expiry = Int64(parts[0]), Double(expiry) > now else { return false }
        return constantTimeEqual(String(parts[2]), mac("session:\(parts[0]).\(parts[1])"))
    }

    /// The CSRF token of a session (what the page embeds and every POST must send back).
    public func csrfToken(session: String) -> String {
        mac("csrf:" + session)
    }

    /// Why a state-changing request is refused, or nil when it may go ahead: a read-only
    /// dashboard refuses everything; a session needs its CSRF token and an `Origin` naming
    /// this very server (`Host`); a bearer client needs neither.
    public func writeRefusal(identity: Identity, csrf: String?, origin: String?, host: String?) -> String? {
        switch identity {
        case .anonymous:
            return "this dashboard is read-only: start it with HAUL_DASHBOARD_TOKEN or --token-file to allow actions"
        case .none:
            return "not logged in: log in with the dashboard token, or send Authorization: Bearer TOKEN"
        case .bearer:
            return nil
        case .session(let session):
            guard Self.originMatches(origin, host: host) else { return "cross-site request refused: its Origin is not this dashboard" }
            guard let csrf, constantTimeEqual(csrf, csrfToken(session: session)) else { return "missing or wrong CSRF token: reload the page" }
            return nil
        }
    }

    /// Whether `origin` is `http://HOST` or `https://HOST` for the request's `Host` field.
    public static func originMatches(_ origin: String?, host: String?) -> Bool {
        guard let origin, let host, !host.isEmpty else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }

    /// Whether a read-only dashboard should answer a request for `host` (its `Host` field): only
    /// loopback names, so that a web page cannot read it through DNS rebinding.
    public static func loopbackHost(_ host: String?) -> Bool {
        guard let host else { return false }
        let name: Substring
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            name = host[...close]
        } else {
            name = host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0]
        }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        let dottedQuad = octets.count == 4 && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
        return name == "localhost" || name == "[::1]" || dottedQuad && octets[0] == "127"
    }

    /// The value of cookie `name` in a `Cookie` header field.
    public static func cookieValue(_ header: String?, name: String) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, String(parts[0]).trimmingWhitespace() == name { return String(parts[1]).trimmingWhitespace() }
        }
        return nil
    }

    /// The `Set-Cookie` value that starts a session.
    public static func sessionCookie(_ value: String) -> String {
        "\(cookieName)=\(value); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Int(sessionLifetime))"
    }

    /// The `Set-Cookie` value that ends a session.
    public static let clearedCookie = "\(cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"

    private func mac(_ message: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let bytes = Array(message.utf8)
        _ = key.withUnsafeBytes { keyBytes in
            HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(key.count), bytes, bytes.count, &digest, &length)
        }
        return ASCIIBytes.hex(digest.prefix(Int(length)))
    }
}

/// Equality that takes as long whatever the first difference (a token compared early-exit leaks its prefix).
func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    var difference = UInt8(x.count == y.count ? 0 : 1)
    for index in 0..<max(x.count, y.count) {
        difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
    }
    return difference == 0
}
