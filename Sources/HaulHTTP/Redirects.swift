import Foundation
import HaulCore

/// How Haul follows a redirect, hop by hop (libcurl's own following would send custom secret
/// headers such as `X-Api-Key` to whatever host a redirect names). Pure.
extension FetchRequest {
    /// The most redirects one request follows.
    public static let maximumRedirects = 10

    /// The request for the next hop after a `Location: location` answer to this one.
    ///
    /// The location is resolved against this request's URL and must be http or https. Secret
    /// headers (``HaulCore/Redaction/isSecretHeader(_:)``: `Authorization`, `Cookie`,
    /// `X-Api-Key`…) and URL credentials go only to this request's origin (scheme, host, port).
    /// An https → http hop is followed only when `allowDowngrade` (the transfer has a checksum,
    /// or `--allow-downgrade`), and logged.
    /// - Parameter hop: the number of this redirect, from 1.
    /// - Throws: `redirects`, `redirect-scheme` or `redirect-downgrade` (none transient).
    public func following(_ location: String, hop: Int) throws(HaulError) -> FetchRequest {
        let shown = Redaction.url(url)
        guard hop <= Self.maximumRedirects else {
            throw HaulError(.redirects, "too many redirects from \(shown)", hint: "the origin redirects in a loop or more than \(Self.maximumRedirects) times")
        }
        guard let resolved = Origin.resolve(location, against: url), let to = Origin(url: resolved), let from = Origin(url: url) else {
            throw HaulError(
                .redirectScheme, "\(shown) redirected to '\(SafeText.cleanLine(Redaction.url(location)))', which is not http or https",
                hint: "haul follows redirects only to http and https")
        }
        if from.scheme == "https" && to.scheme == "http" {
            guard allowDowngrade else {
                throw HaulError(
                    .redirectDowngrade, "\(shown) redirected from https to http (\(Redaction.url(resolved)))",
                    hint: "give the transfer a --checksum, or --allow-downgrade to accept an unencrypted hop")
            }
            Log.warning("following a redirect from https to http", [("from", shown), ("to", Redaction.url(resolved))])
        }
        var next = self
        next.url = resolved
        if to != from {
            let kept = headerLines.filter { line in
                guard let colon = line.firstIndex(of: ":") else { return true }
                return !Redaction.isSecretHeader(String(line[..<colon]).trimmingWhitespace())
            }
            if kept.count != headerLines.count {
                Log.info("redirect to another origin: secret headers are not sent there", [("from", from.description), ("to", to.description)])
            }
            next.headerLines = kept
        } else {
            next.url = Self.carryingCredentials(of: url, to: resolved)
        }
        return next
    }

    /// `target` with `source`'s `user:password@` when it has none of its own (same origin only).
    private static func carryingCredentials(of source: String, to target: String) -> String {
        guard let from = URLComponents(string: source), from.user != nil, var to = URLComponents(string: target), to.user == nil else { return target }
        to.percentEncodedUser = from.percentEncodedUser
        to.percentEncodedPassword = from.percentEncodedPassword
        return to.string ?? target
    }
}
