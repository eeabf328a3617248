import Foundation

/// Keeps secrets out of everything Haul prints or logs: URL credentials, `Authorization`,
/// `Proxy-Authorization` and `Cookie` header values, and secret-looking query parameters.
public enum Redaction {
    private static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token"]
    private static let secretQueryKeys: Set<String> = [
        "token", "signature", "sig", "key", "secret", "password", "access_token", "api_key", "apikey", "client_secret", "private_token",
        "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential",
    ]

    /// The URL with any `user:password@` replaced by `***@` and secret query values by `***`
    /// (signed-URL keys such as `X-Amz-Signature` or `sig`, API keys and tokens), keys compared
    /// case-insensitively after percent-decoding, so `X%2DAmz%2DSignature` is caught too.
    ///
    /// The delimiters are found among scalars, not `Character`s: a `@`, `&` or `=` followed by a
    /// combining mark is one `Character` that is none of them, yet a server splits there.
    public static func url(_ text: String) -> String {
        var result = text
        if let schemeEnd = result.range(of: "://") {
            let authority = result.unicodeScalars[schemeEnd.upperBound...]
            let authorityEnd = authority.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? result.endIndex
            if let at = result.unicodeScalars[schemeEnd.upperBound..<authorityEnd].lastIndex(of: "@") {
                result.replaceSubrange(schemeEnd.upperBound..<at, with: "***")
            }
        }
        guard let question = result.unicodeScalars.firstIndex(of: "?") else { return result }
        let pairs = result.unicodeScalars[result.unicodeScalars.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
        let query = pairs.map { pair -> String in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String(Substring($0)) }
            guard parts.count == 2, isSecretQueryKey(parts[0]) else { return String(Substring(pair)) }
            return "\(parts[0])=***"
        }
        return String(Substring(result.unicodeScalars[...question])) + query.joined(separator: "&")
    }

    /// Whether a query parameter named `key` (as written in the URL) carries a secret.
    public static func isSecretQueryKey(_ key: String) -> Bool {
        let decoded = (key.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? key).lowercased()
        return secretQueryKeys.contains(decoded)
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
