import HaulCore

/// The status line and headers of the final response (after redirects), as libcurl delivered them.
public struct ResponseHead: Sendable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// The reason phrase, e.g. `Not Found` (empty under HTTP/2), made safe to show
    /// (`SafeText.cleanLine`): the origin chooses it, escape sequences included.
    public var reason: String
    /// Header fields by lowercased name; a repeated field keeps its last value.
    public var headers: [String: String]
    /// The URL that answered, after any redirects (`nil` when not known).
    public var url: String?

    /// Creates a head.
    public init(status: Int, reason: String = "", headers: [String: String] = [:], url: String? = nil) {
        self.status = status
        self.reason = SafeText.cleanLine(reason)
        self.headers = headers
        self.url = url
    }

    /// The named header's value; names are case-insensitive.
    public subscript(_ name: String) -> String? { headers[name.lowercased()] }

    /// `Content-Length` as a number.
    public var contentLength: Int64? { self["content-length"].flatMap { Int64($0.trimmingWhitespace()) } }

    /// The parsed `Content-Range`, if present and well formed.
    public var contentRange: ContentRange? { self["content-range"].flatMap(ContentRange.init) }

    /// The `ETag`, if present.
    public var etag: String? { self["etag"] }

    /// Whether the ETag is a strong validator (usable in `If-Range`).
    public var hasStrongETag: Bool { etag.map(Self.isStrong(etag:)) ?? false }

    /// Whether `etag` is strong: it does not start with the bytes `W/` (as `Character`s, `W` then
    /// `/` with a combining mark does not start with `W/`, yet it is a weak tag to a server).
    public static func isStrong(etag: String) -> Bool { !etag.utf8.starts(with: "W/".utf8) }

    /// `Retry-After` in seconds (delta form only; a date is treated as absent).
    public var retryAfter: Double? { self["retry-after"].flatMap { Double($0.trimmingWhitespace()) } }

    /// `404 Not Found`-style text for messages (the standard phrase over HTTP/2, which sends none).
    public var statusText: String { HTTPStatusText.of(status, reason: reason) }

    /// Parses one header line into this head; a status line starts a new response.
    public mutating func absorb(line: String) {
        var line = line
        line.withUTF8 { absorb(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// `absorb(line:)` over the line's bytes as libcurl hands them over: every header line of
    /// every response passes here, so a header line makes no strings but its name and value.
    public mutating func absorb(bytes line: UnsafeRawBufferPointer) {
        let trimmed = UnsafeRawBufferPointer(rebasing: line[...].trimmingASCIIWhitespace())
        if trimmed.starts(with: "HTTP/".utf8) {
            // `HTTP/1.1 200 OK`: the version, the code, the reason (which may hold spaces, or be absent).
            let parts = trimmed.split(separator: UInt8(ascii: " "), maxSplits: 2)
            status = parts.count > 1 ? Int(String(decoding: parts[1], as: UTF8.self)) ?? 0 : 0
            reason = parts.count > 2 ? SafeText.cleanLine(String(decoding: parts[2], as: UTF8.self)) : ""
            headers = Dictionary(minimumCapacity: 16)
        } else if let colon = trimmed.firstIndex(of: UInt8(ascii: ":")) {
            let value = UnsafeRawBufferPointer(rebasing: trimmed[(colon + 1)...].trimmingASCIIWhitespace())
            let name = Self.lowercasedName(UnsafeRawBufferPointer(rebasing: trimmed[..<colon]))
            let text = String(decoding: value, as: UTF8.self)
            // Several `Link` fields are one list (RFC 6249 mirrors come one a field).
            if name == "link", let earlier = headers[name] { headers[name] = earlier + ", " + text } else { headers[name] = text }
        }
    }

    /// A field name in lower case (names are ASCII tokens; anything else is lowercased as text).
    private static func lowercasedName(_ bytes: UnsafeRawBufferPointer) -> String {
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return String(decoding: bytes, as: UTF8.self).lowercased() }
        return String(unsafeUninitializedCapacity: bytes.count) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = ASCIIBytes.lowercased(byte) }
            return bytes.count
        }
    }
}

/// How an origin's answer to an HTTP status is treated.
public enum StatusPolicy {
    /// The error for a non-success status: transient for 408, 429 and 5xx, permanent otherwise.
    /// It names the URL that answered (after redirects), else `url`.
    public static func error(for head: ResponseHead, url: String) -> HaulError {
        let shown = Redaction.url(head.url ?? url)
        switch head.status {
        case 408, 429, 500...599:
            var error = HaulError(.originStatus, "origin answered \(head.statusText) for \(shown)", transient: true)
            error.retryAfter = head.retryAfter
            return error
        case 401, 403:
            return HaulError(.originAuth, "origin answered \(head.statusText) for \(shown)", hint: "check the credentials or add the needed --header")
        case 404, 410:
            return HaulError(.originStatus, "origin answered \(head.statusText) for \(shown)", hint: "check the URL")
        default:
            return HaulError(.originStatus, "origin answered \(head.statusText) for \(shown)", hint: "the origin refused the request")
        }
    }
}
