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
    public static func url(_ text: String) -> String {
        var result = text
        if let schemeEnd = result.range(of: "://") {
            let authorityStart = schemeEnd.upperBound
            let authorityEnd = result[authorityStart...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? result.endIndex
            if let at = result[authorityStart..<authorityEnd].lastIndex(of: "@") {
                result.replaceSubrange(authorityStart..<at, with: "***")
            }
        }
        guard let question = result.firstIndex(of: "?") else { return result }
        let query = result[result.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, isSecretQueryKey(String(parts[0])) else { return String(pair) }
            return "\(parts[0])=***"
        }
        return String(result[...question]) + query.joined(separator: "&")
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
