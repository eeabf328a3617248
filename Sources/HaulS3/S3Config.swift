import Foundation
import HaulCore

/// Credentials for SigV4. `description` never shows the secret.
public struct S3Credentials: Sendable, Hashable, CustomStringConvertible {
    public let accessKeyID: String
    public let secretAccessKey: String
    public let sessionToken: String?
    /// When temporary credentials stop working (`nil`: never).
    public let expiration: Date?

    /// Creates credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, expiration: Date? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }

    /// The key id only.
    public var description: String { "key \(accessKeyID)" }
}

/// Where an S3-compatible service is and how to sign for it, read the way every S3 tool reads it.
public struct S3Config: Sendable {
    /// `scheme://host[:port]` of the service, without a trailing slash.
    public let endpoint: String
    /// Whether the endpoint came from the user (an S3-compatible store) rather than AWS's default.
    public let customEndpoint: Bool
    public let region: String
    /// Path-style (`endpoint/bucket/key`) rather than virtual-hosted (`bucket.host/key`) addressing.
    public let pathStyle: Bool
    /// Asked for the credentials before each request.
    public let credentials: CredentialProvider
    /// CA bundle for TLS to the endpoint (`AWS_CA_BUNDLE`).
    public let caBundle: String?

    /// Whether requests for `bucket` use path-style addressing: when asked for (an endpoint of
    /// its own, `HAUL_S3_ADDRESSING=path`), and, as the AWS SDKs do, for a bucket name that is
    /// no DNS host label (upper case, `_`, over 63 characters, empty or dash-edged labels) and
    /// for a name with dots over HTTPS, whose host `a.b.s3.amazonaws.com` the wildcard
    /// certificate `*.s3.amazonaws.com` does not cover.
    public func usesPathStyle(for bucket: String) -> Bool {
        if pathStyle { return true }
        let labels = bucket.split(separator: ".", omittingEmptySubsequences: false)
        let hostSafe =
            (3...63).contains(bucket.count)
            && labels.allSatisfy { label in
                !label.isEmpty && label.first != "-" && label.last != "-"
                    && label.allSatisfy { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "-" }
            }
        return !hostSafe || (labels.count > 1 && !endpoint.hasPrefix("http://"))
    }

    /// Creates a configuration with fixed credentials.
    public init(endpoint: String?, region: String, pathStyle: Bool? = nil, credentials: S3Credentials, caBundle: String? = nil) {
        self.init(endpoint: endpoint, region: region, pathStyle: pathStyle, credentials: CredentialProvider(fixed: credentials), caBundle: caBundle)
    }

    /// Creates a configuration.
    public init(endpoint: String?, region: String, pathStyle: Bool? = nil, credentials: CredentialProvider, caBundle: String? = nil) {
        self.endpoint = (endpoint ?? "https://s3.\(region).amazonaws.com").trimmingTrailingSlashes
        customEndpoint = endpoint != nil
        self.region = region
        self.pathStyle = pathStyle ?? (endpoint != nil)
        self.credentials = credentials
        self.caBundle = caBundle
    }

    /// Reads the settings the AWS CLI reads: credentials along ``CredentialSource``'s chain
    /// (fetched once here, so a missing or broken source fails at once), the profile
    /// (`AWS_PROFILE`) of `AWS_CONFIG_FILE` (`~/.aws/config`) and `AWS_SHARED_CREDENTIALS_FILE`
    /// (`~/.aws/credentials`); the region from `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's
    /// `region` (default us-east-1); the endpoint from `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`,
    /// the profile's `services` section's `s3` `endpoint_url`, the profile's `endpoint_url`
    /// (path-style addressing when given); `HAUL_S3_ADDRESSING` (`path` or `virtual`,
    /// overriding) and `AWS_CA_BUNDLE` (else the profile's `ca_bundle`).
    public static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment) throws -> S3Config {
        func setting(_ name: String) -> String? { env[name].flatMap { $0.isEmpty ? nil : $0 } }
        let home = env["HOME"] ?? ""
        let config = AWSConfigFile(parsing: (try? String(contentsOfFile: setting("AWS_CONFIG_FILE") ?? home + "/.aws/config", encoding: .utf8)) ?? "")
        let credentialsFile = setting("AWS_SHARED_CREDENTIALS_FILE") ?? home + "/.aws/credentials"
        let keys = AWSConfigFile(parsing: (try? String(contentsOfFile: credentialsFile, encoding: .utf8)) ?? "")
        let source = try CredentialSource.resolve(env: env, config: config, credentials: keys)
        let profile = AWSConfigFile.profile(setting("AWS_PROFILE") ?? setting("AWS_DEFAULT_PROFILE") ?? "default", config: config, credentials: keys) ?? [:]
        let services = profile["services"].map { config.service("s3", in: $0) } ?? [:]
        let region = [setting("AWS_REGION"), setting("AWS_DEFAULT_REGION"), profile["region"]].compactMap { $0 }.first ?? "us-east-1"
        let endpoint = [setting("AWS_ENDPOINT_URL_S3"), setting("AWS_ENDPOINT_URL"), services["endpoint_url"], profile["endpoint_url"]].compactMap { $0 }
            .first { !$0.isEmpty }
        if let endpoint, !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) {
            throw HaulError.usage("AWS_ENDPOINT_URL '\(endpoint)' is not an http:// or https:// URL")
        }
        var pathStyle: Bool?
        switch env["HAUL_S3_ADDRESSING"] ?? "" {
        case "": pathStyle = nil
        case "path": pathStyle = true
        case "virtual": pathStyle = false
        case let other: throw HaulError.usage("HAUL_S3_ADDRESSING '\(other)' is not path or virtual")
        }
        let bundle = setting("AWS_CA_BUNDLE") ?? profile["ca_bundle"]
        let provider = CredentialProvider.shared(source, caBundle: bundle)
        _ = try provider.current()
        return S3Config(endpoint: endpoint, region: region, pathStyle: pathStyle, credentials: provider, caBundle: bundle)
    }

    /// The credentials of `[profile]` in an AWS credentials file, if it has a key id and secret.
    public static func profileCredentials(_ text: String, profile: String) -> S3Credentials? {
        let values = AWSConfigFile(parsing: text).sections[profile] ?? [:]
        guard let key = values["aws_access_key_id"], let secret = values["aws_secret_access_key"] else { return nil }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: values["aws_session_token"])
    }
}
