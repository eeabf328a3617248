import Foundation
import HaulMetrics

/// Builders of the dashboard's responses.
enum Reply {
    static func page(_ status: UInt32, _ html: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/html; charset=utf-8", body: html)
    }

    static func text(_ status: UInt32, _ text: String, headers: [HTTPResponse.Header] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: text, headers: headers)
    }

    /// A JSON object or array (keys sorted, slashes unescaped).
    static func json(_ status: UInt32, _ value: Any) -> HTTPResponse {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("null".utf8)
        return HTTPResponse(status: status, contentType: "application/json", body: String(decoding: data, as: UTF8.self))
    }

    /// 303 See Other to a path of this server, optionally setting a cookie.
    static func redirect(_ path: String, cookie: String? = nil) -> HTTPResponse {
        var headers = [HTTPResponse.Header("Location", path)]
        if let cookie { headers.append(HTTPResponse.Header("Set-Cookie", cookie)) }
        return HTTPResponse(status: 303, contentType: "text/plain; charset=utf-8", body: "see \(path)\n", headers: headers)
    }
}

/// What every page needs to know about the request it answers.
struct PageContext {
    let identity: DashboardAuth.Identity
    /// The session's CSRF token; nil for read-only and bearer requests.
    let csrf: String?
    let readOnly: Bool

    /// Whether action buttons are shown.
    var canAct: Bool { !readOnly && csrf != nil }
}
