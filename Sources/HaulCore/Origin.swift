import Foundation

/// The (scheme, host, port) triple a URL's secrets and capabilities belong to, as browsers and
/// RFC 6454 define an origin: `https://a.example/x` and `https://a.example:443/y` share one,
/// `http://a.example/` and `https://a.example:8443/` are each another.
public struct Origin: Sendable, Equatable, CustomStringConvertible {
    /// `http` or `https`, lower case.
    public let scheme: String
    /// The host, lower case, without brackets around an IPv6 literal.
    public let host: String
    /// The port, the scheme's default when the URL names none.
    public let port: Int

    /// The origin of an absolute http(s) URL with a host; `nil` for anything else.
    public init?(url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let defaultPort: Int
        switch scheme {
        case "http": defaultPort = 80
        case "https": defaultPort = 443
        default: return nil
        }
        self.scheme = scheme
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = components.port ?? defaultPort
    }

    /// `scheme://host:port`.
    public var description: String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// Resolves `reference` (absolute, or relative as in a `Location` header) against `base`.
    /// - Returns: the absolute URL, or `nil` when it cannot be resolved.
    public static func resolve(_ reference: String, against base: String) -> String? {
        guard let baseURL = URL(string: base), let resolved = URL(string: reference.trimmingWhitespace(), relativeTo: baseURL) else { return nil }
        return resolved.absoluteString
    }
}
