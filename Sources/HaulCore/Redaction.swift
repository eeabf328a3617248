import Foundation

/// Keeps secrets out of everything Haul prints or logs: URL credentials, `Authorization`,
/// `Proxy-Authorization` and `Cookie` header values, and secret-looking query parameters.
public enum Redaction {
    private static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token"]
    private static let secretQueryKeys = ["token", "signature", "sig", "key", "secret", "password", "x-amz-signature", "x-amz-credential", "access_token"]

    /// The URL with any `user:password@` replaced by `***@` and secret query values by `***`.
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
            guard parts.count == 2, secretQueryKeys.contains(parts[0].lowercased()) else { return String(pair) }
            return "\(parts[0])=***"
        }
        return String(result[...question]) + query.joined(separator: "&")
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
