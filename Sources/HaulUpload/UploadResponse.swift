import Foundation
import HaulCore
import HaulHTTP

/// What the server answered to an upload's final request.
public struct UploadResponse: Sendable {
    /// Bodies longer than this many bytes are cut; ``bodyTruncated`` tells.
    public static let bodyLimit = 1 << 20

    /// The HTTP status code, such as 201.
    public var status: Int
    /// The reason phrase from the status line (`Created`); empty over HTTP/2, which has none.
    /// Made safe to show (`SafeText.cleanLine`): the server chooses it, escape sequences included.
    public var reason: String
    /// The response headers in the order received, names as the server spelled them.
    public var headers: [(name: String, value: String)]
    /// The body, at most ``bodyLimit`` bytes.
    public var body: Data
    /// Whether the server sent more than ``bodyLimit`` bytes of body.
    public var bodyTruncated: Bool

    /// An answer; `reason` and `headers` as parsed from the wire.
    public init(status: Int, reason: String = "", headers: [(name: String, value: String)] = [], body: Data = Data(), bodyTruncated: Bool = false) {
        self.status = status
        self.reason = SafeText.cleanLine(reason)
        self.headers = headers
        self.body = body
        self.bodyTruncated = bodyTruncated
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The last value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.last { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// `201 Created` (the standard phrase over HTTP/2, which sends none).
    public var statusLine: String { HTTPStatusText.of(status, reason: reason) }

    /// The body pretty-printed when it is JSON, otherwise as UTF-8 text (invalid bytes replaced).
    public var prettyBody: String {
        if let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            let pretty = try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        {
            return String(decoding: pretty, as: UTF8.self)
        }
        return String(decoding: body, as: UTF8.self)
    }

    /// The server's own explanation: a JSON `detail`/`message`/`error`/`title` string; for an
    /// HTML error page, its `<title>` (else its `<h1>`) unless that only repeats the status line
    /// (nginx's `413 Request Entity Too Large`); else the first line of the body. At most 200
    /// characters, made safe to show (`SafeText.cleanLine`); empty when there is none.
    public var serverMessage: String {
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            for key in ["detail", "message", "error", "title"] {
                if let text = object[key] as? String { return Self.oneLine(text) }
            }
        }
        let text = String(decoding: body, as: UTF8.self)
        if text.trimmingWhitespace().hasPrefix("<") {
            let heading = Self.oneLine(Self.element("title", in: text) ?? Self.element("h1", in: text) ?? "")
            return heading.hasSuffix(statusLine) || heading == String(status) ? "" : heading
        }
        return Self.oneLine(String(text.split(whereSeparator: \.isNewline).first ?? ""))
    }

    /// The text inside the first `<name>` element of an HTML page, its tags removed and its
    /// runs of white space made one space.
    private static func element(_ name: String, in html: String) -> String? {
        guard let open = html.range(of: "<\(name)", options: .caseInsensitive),
            let start = html[open.upperBound...].firstIndex(of: ">"),
            let close = html[start...].range(of: "</\(name)", options: .caseInsensitive)
        else { return nil }
        let inner = html[html.index(after: start)..<close.lowerBound]
        return inner.replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
            .replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression).trimmingWhitespace()
    }

    /// Seconds the server asked to wait (`Retry-After`), if it did.
    public var retryAfter: Double? { header("Retry-After").flatMap { RetryPolicy.parseRetryAfter($0) } }

    /// The error for a non-2xx answer to `action` (such as `upload to http://host/x`).
    ///
    /// 5xx, 408 and 429 are transient (retried); every other status fails at once.
    func failure(for action: String, redactor: Redactor) -> HaulError {
        let said = serverMessage.isEmpty ? "" : ": \(redactor.scrub(serverMessage))"
        let transient = status >= 500 || status == 408 || status == 429
        let hint: String? =
            switch status {
            case 401, 403: "check the credentials given with --header"
            case 413: "the server refuses files this large"
            case 300..<400: "uploads do not follow redirects; use the URL it points to (\(SafeText.cleanLine(Redaction.url(header("Location") ?? "?"))))"
            default: nil
            }
        let code: HaulError.Code = transient ? .serverError : .uploadRejected
        var error = HaulError(code, "\(action) failed with \(statusLine)\(said)", hint: hint, transient: transient)
        error.retryAfter = retryAfter
        return error
    }

    private static func oneLine(_ text: String) -> String {
        let flat = SafeText.cleanLine(text.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingWhitespace())
        return flat.count > 200 ? String(flat.prefix(200)) + "…" : flat
    }
}
