import Foundation

/// The rules an origin URL must pass before anything is recorded: http or https, a host, no spaces.
public enum OriginURL {
    /// Returns the URL without its fragment if Haul can fetch it, else throws a usage error that
    /// says why. A fragment (`#…`) is never sent to the origin, so `URL` and `URL#part` are one
    /// file: one transfer, one source mark, as curl and wget fetch them.
    /// - Parameter uploading: the URL is one `haul upload` sends files to, which the messages say.
    public static func validate(_ text: String, uploading: Bool = false) throws -> String {
        // Redacted only for a message: a manifest validates thousands of good URLs.
        var shown: String { SafeText.cleanLine(Redaction.url(text)) }
        if text.containsBytes(of: "://"), let blank = text.unicodeScalars.first(where: { $0 == " " || SafeText.isControl($0) }) {
            throw blank == " "
                ? HaulError.usage(
                    "'\(shown)' holds a space, which a URL cannot", hint: "percent-encode it: a space is %20, as in https://example.com/a%20b.iso")
                : HaulError.usage(
                    "'\(shown)' holds a control character, which a URL cannot", hint: "remove it, or percent-encode it: a tab is %09, a line feed %0A")
        }
        guard !text.isEmpty, let components = URLComponents(string: text), let scheme = components.scheme else {
            throw HaulError.usage("'\(shown)' is not a URL", hint: "give a full URL such as https://example.com/file.iso")
        }
        guard ["http", "https"].contains(scheme.lowercased()) else {
            let does = uploading ? "uploads only to" : "fetches only"
            throw HaulError.usage("'\(shown)' uses the \(scheme): scheme, but haul \(does) http and https URLs", hint: "give an http:// or https:// URL")
        }
        guard let host = components.host, !host.isEmpty else {
            throw HaulError.usage("'\(shown)' has no host", hint: "write it as \(scheme)://HOST/PATH")
        }
        // URLComponents parsed it, so its first `#` byte starts the fragment.
        return text.utf8.firstIndex(of: UInt8(ascii: "#")).map { String(text[..<$0]) } ?? text
    }

    /// The last non-empty path segment, percent-decoded once, for naming a download like
    /// `aria2c`: `pct%2541.bin` is `pct%41.bin`, and `a%252Fb.bin` is `a%2Fb.bin`.
    public static func lastPathSegment(_ text: String) -> String? {
        guard let components = URLComponents(string: text) else { return nil }
        // Split the encoded path: an encoded `%2F` is part of the name, not a separator.
        let segment = components.percentEncodedPath.lastSlashComponent.map(String.init)
        return segment.flatMap { $0.removingPercentEncoding ?? $0 }
    }

    /// `host` or `host:port`, for per-origin limits and messages: the port only when it is
    /// neither 80 nor 443 (the web's default ports), so that `https://a.example:443/x` and
    /// `https://a.example/y` count against one host limit, and an operator names a host the
    /// same way whatever its URLs spell (`HostLimits.parse`).
    public static func hostKey(_ text: String) -> String {
        guard let components = URLComponents(string: text), let host = components.host else { return "" }
        return withPort(host.lowercased(), components.port)
    }

    /// `host`, with `:port` unless `port` is nil, 80 or 443.
    public static func withPort(_ host: String, _ port: Int?) -> String {
        guard let port, port != 80, port != 443 else { return host }
        return "\(host):\(port)"
    }

    /// `hostKey` of each of `urls` (validated ones), parsing each distinct scheme and authority
    /// once: a manifest's thousands of URLs name a handful of origins, and parsing one costs
    /// more than inserting its row.
    public static func hostKeys(_ urls: [String]) -> [String] {
        var known: [Substring: String] = [:]
        return urls.map { url in
            guard let origin = schemeAndAuthority(url) else { return hostKey(url) }
            if let key = known[origin] { return key }
            let key = hostKey(url)
            known[origin] = key
            return key
        }
    }

    /// `scheme://authority` of `text`: everything before the path, query or fragment, cut at
    /// their delimiters' bytes as the URL parser cuts them.
    static func schemeAndAuthority(_ text: String) -> Substring? {
        let bytes = text.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else { return nil }
        let authority = bytes.index(colon, offsetBy: 3)
        let end = bytes[authority...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        return text[..<end]
    }
}
