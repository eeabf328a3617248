import Foundation
import HaulCore
import Synchronization

/// The credentials S3 requests are signed with, asked for before each request: fetched from
/// their ``CredentialSource`` when first needed and again once they are within
/// ``refreshAhead`` of their expiration (or a store said the token is no longer good), so a
/// long-running worker moves to new credentials before the old ones lapse. One fetch at a time;
/// when a refresh fails while the old credentials are still valid, they are used meanwhile.
public final class CredentialProvider: Sendable, CustomStringConvertible {
    /// Where the credentials come from.
    public let source: CredentialSource
    /// How long before expiring credentials are fetched anew: five minutes, as the SDKs do.
    public static let refreshAhead: TimeInterval = 300
    /// S3 error codes saying the session token expired or is not (or no longer) valid.
    public static let tokenCodes: Set<String> = ["ExpiredToken", "ExpiredTokenException", "InvalidToken", "TokenRefreshRequired"]

    private let fetch: @Sendable () throws -> S3Credentials
    private let cache = Mutex<S3Credentials?>(nil)

    /// Credentials that never change.
    public convenience init(fixed credentials: S3Credentials) {
        self.init(source: .fixed(credentials, from: "the configured keys")) { credentials }
    }

    /// Credentials from `source`, using `caBundle` for HTTPS to STS.
    public convenience init(source: CredentialSource, caBundle: String? = nil) {
        self.init(source: source) { try source.fetch(caBundle: caBundle) }
    }

    init(source: CredentialSource, fetch: @escaping @Sendable () throws -> S3Credentials) {
        self.source = source
        self.fetch = fetch
    }

    /// The one provider per source and CA bundle in this process, so every S3 client of a
    /// worker shares one cache (and one `credential_process` run per refresh).
    public static func shared(_ source: CredentialSource, caBundle: String?) -> CredentialProvider {
        registry.withLock { providers in
            let key = Key(source: source, caBundle: caBundle)
            if let known = providers[key] { return known }
            let made = CredentialProvider(source: source, caBundle: caBundle)
            providers[key] = made
            return made
        }
    }

    private struct Key: Hashable {
        var source: CredentialSource
        var caBundle: String?
    }

    private static let registry = Mutex<[Key: CredentialProvider]>([:])

    /// Credentials to sign a request with at `now`: the cached ones unless they are within
    /// ``refreshAhead`` of expiring, else fetched anew.
    public func current(now: Date = Date()) throws -> S3Credentials {
        try cache.withLock { cached throws -> S3Credentials in
            if let known = cached, Self.usable(known, at: now) { return known }
            do {
                let fresh = try fetch()
                cached = fresh
                return fresh
            } catch {
                if let known = cached, let expiration = known.expiration, expiration > now { return known }
                throw error
            }
        }
    }

    /// Whether `credentials` need no refresh at `now`.
    public static func usable(_ credentials: S3Credentials, at now: Date) -> Bool {
        credentials.expiration.map { $0.timeIntervalSince(now) > refreshAhead } ?? true
    }

    /// Forgets the cached credentials: the next request fetches new ones.
    public func invalidate() { cache.withLock { $0 = nil } }

    /// Whether the credentials in use carry a session token.
    public var hasSessionToken: Bool { cache.withLock { $0?.sessionToken != nil } }

    /// The key id in use and where it came from; never the secret or token.
    public var description: String {
        var key = cache.withLock { $0?.accessKeyID }
        if key == nil, case .fixed(let credentials, _) = source { key = credentials.accessKeyID }
        return (key.map { "key \($0) from " } ?? "credentials from ") + source.name
    }

    /// Runs `send` with the current credentials; when the store answers that the token expired
    /// or is invalid (``tokenCodes``, or a bodiless 400 to a request signed with a token), fetches
    /// new credentials and, if the request can be sent again (`replayable`), sends it once more.
    func signing(replayable: Bool, _ send: (S3Credentials) throws -> S3Client.Response) throws -> S3Client.Response {
        let credentials = try current()
        let first = try send(credentials)
        guard Self.tokenRejected(first, signedWithToken: credentials.sessionToken != nil) else { return first }
        invalidate()
        guard replayable else { return first }
        return try send(current())
    }

    /// Whether `response` says the session token is no good.
    static func tokenRejected(_ response: S3Client.Response, signedWithToken: Bool) -> Bool {
        guard [400, 403].contains(response.status) else { return false }
        let code = S3XML.value("Code", in: String(decoding: response.body.prefix(64 << 10), as: UTF8.self))
        if let code { return tokenCodes.contains(code) }
        return response.status == 400 && signedWithToken
    }
}
