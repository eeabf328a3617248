import Foundation
import HaulCore

/// Keeps one request's secrets out of free text bound for errors and logs: libcurl's error
/// messages and the server's replies, which may echo a token back.
///
/// It collects the values of credential headers (``HaulCore/Redaction/isSecretHeader(_:)``) and
/// the URL's secrets (``HaulCore/Redaction/secrets(in:)``: its userinfo and secret query
/// values), and replaces them wherever they appear. URLs and header lines themselves
/// go through ``HaulCore/Redaction`` instead.
public struct Redactor: Sendable {
    /// What a secret is replaced with, as ``HaulCore/Redaction`` does.
    public static let placeholder = "***"
    /// Secrets shorter than this are not searched for (they would garble the text); URLs and
    /// header lines are still redacted by their structure.
    static let shortestScrubbed = 4

    private let secrets: [String]

    /// Collects the secrets found in `url` and `headers` (`Name: value` lines).
    public init(url: String, headers: [String]) {
        var found: [String] = []
        for line in headers {
            guard let colon = line.firstIndex(of: ":"), Redaction.isSecretHeader(line[..<colon].trimmingWhitespace()) else { continue }
            let value = line[line.index(after: colon)...].trimmingWhitespace()
            found.append(value)
            found += value.split(separator: " ").dropFirst().map(String.init)
        }
        found += Redaction.secrets(in: url)
        secrets = found.filter { $0.count >= Self.shortestScrubbed }.sorted { $0.count > $1.count }
    }

    /// `text` with every collected secret replaced by ``placeholder``.
    public func scrub(_ text: String) -> String {
        secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: Self.placeholder) }
    }
}
