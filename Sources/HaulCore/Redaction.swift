import Foundation

/// Keeps secrets out of everything Haul prints or logs: URL credentials, `Authorization`,
/// `Proxy-Authorization` and `Cookie` header values, and secret-looking query parameters.
public enum Redaction {
    private static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token"]
    /// A query parameter whose name holds one of these (case-insensitively, after
    /// percent-decoding) carries a secret: a rule by pattern rather than a list of names, so
    /// `access-token`, `X-Amz-Security-Token`, `sv-sig`, `Key-Pair-Id`, `Policy`, `passwd` or
    /// `jwt` are caught alike, and a name never seen before is caught when it says what it is.
    /// It errs towards hiding: `author` or `keyword` are hidden too.
    public static let secretQueryWords = [
        "token", "secret", "sig", "key", "auth", "session", "pass", "pwd", "jwt", "credential", "policy",
    ]

    /// The URL with any `user:password@` replaced by `***@` and the value of every secret query
    /// parameter (``isSecretQueryKey(_:)``: signed-URL keys such as `X-Amz-Signature` or `sig`,
    /// API keys, tokens, passwords, sessions) by `***`; names are compared case-insensitively
    /// after percent-decoding, so `X%2DAmz%2DSignature` is caught too. The one function every
    /// URL Haul shows (in a message, a log line, `haul list`/`status`, the dashboard) goes through.
    ///
    /// The delimiters are found among scalars, not `Character`s: a `@`, `&` or `=` followed by a
    /// combining mark is one `Character` that is none of them, yet a server splits there.
    public static func url(_ text: String) -> String {
        var result = text
        if let userinfo = userinfoRange(in: text) { result.replaceSubrange(userinfo, with: "***") }
        guard let question = result.unicodeScalars.firstIndex(of: "?") else { return result }
        var shown = String(Substring(result.unicodeScalars[...question]))
        for (pair, separator) in queryPairs(result.unicodeScalars[result.unicodeScalars.index(after: question)...]) {
            if let (key, _) = secretPair(pair) {
                shown += key + "=***"
            } else {
                shown += String(Substring(pair))
            }
            if let separator { shown.unicodeScalars.append(separator) }
        }
        return shown
    }

    /// Where the `user:password` before an `@` of the authority is, if there is one.
    private static func userinfoRange(in url: String) -> Range<String.Index>? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let authority = url.unicodeScalars[schemeEnd.upperBound...]
        let authorityEnd = authority.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? url.endIndex
        return url.unicodeScalars[schemeEnd.upperBound..<authorityEnd].lastIndex(of: "@").map { schemeEnd.upperBound..<$0 }
    }

    /// The query's `name=value` pairs, each with the separator after it (`&`, or `;` as some
    /// servers take it too; `nil` after the last).
    private static func queryPairs(_ query: Substring.UnicodeScalarView) -> [(Substring.UnicodeScalarView, Unicode.Scalar?)] {
        var pairs: [(Substring.UnicodeScalarView, Unicode.Scalar?)] = []
        var start = query.startIndex
        for index in query.indices where query[index] == "&" || query[index] == ";" {
            pairs.append((query[start..<index], query[index]))
            start = query.index(after: index)
        }
        pairs.append((query[start...], nil))
        return pairs
    }

    /// The name and value of a pair whose value is a secret, as written.
    private static func secretPair(_ pair: Substring.UnicodeScalarView) -> (key: String, value: String)? {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { String(Substring($0)) }
        guard parts.count == 2, isSecretQueryKey(parts[0]) else { return nil }
        return (parts[0], parts[1])
    }

    /// Whether a query parameter named `key` (as written in the URL) carries a secret: its
    /// name holds one of ``secretQueryWords``.
    public static func isSecretQueryKey(_ key: String) -> Bool {
        let decoded = (key.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? key).lowercased()
        return secretQueryWords.contains { decoded.contains($0) }
    }

    /// The secrets a URL carries, as written in it: its userinfo (whole, and the user and the
    /// password apart) and the values of its secret query parameters, percent-encoded and
    /// decoded. For scrubbing free text that may echo them (a server's error message).
    public static func secrets(in url: String) -> [String] {
        var found: [String] = []
        let scalars = url.unicodeScalars
        if let range = userinfoRange(in: url) {
            let userinfo = String(Substring(scalars[range]))
            found.append(userinfo)
            found += userinfo.unicodeScalars.split(separator: ":").map { String(Substring($0)) }
        }
        guard let question = scalars.firstIndex(of: "?") else { return found }
        for (pair, _) in queryPairs(scalars[scalars.index(after: question)...]) {
            guard let (_, value) = secretPair(pair), !value.isEmpty else { continue }
            found.append(value)
            if let decoded = value.replacingOccurrences(of: "+", with: " ").removingPercentEncoding, decoded != value { found.append(decoded) }
        }
        return found
    }

    /// Whether a header's value must never be shown.
    public static func isSecretHeader(_ name: String) -> Bool {
        secretHeaders.contains(name.lowercased())
    }

    /// A `Name: value` line with the value hidden when the name is a secret one.
    public static func headerLine(_ line: String) -> String {
        guard let colon = line.firstIndex(of: ":") else { return line.count > 40 ? String(line.prefix(40)) + "…" : line }
        let name = String(line[..<colon]).trimmingWhitespace()
        return isSecretHeader(name) ? "\(name): ***" : line
    }
}
