import Foundation
import HaulCore

/// Credentials for SigV4. `description` never shows the secret.
public struct S3Credentials: Sendable, CustomStringConvertible {
    public let accessKeyID: String
    public let secretAccessKey: String
    public let sessionToken: String?

    /// Creates credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
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
    public let credentials: S3Credentials
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

    /// Creates a configuration.
    public init(endpoint: String?, region: String, pathStyle: Bool? = nil, credentials: S3Credentials, caBundle: String? = nil) {
        self.endpoint = (endpoint ?? "https://s3.\(region).amazonaws.com").trimmingTrailingSlashes
        customEndpoint = endpoint != nil
        self.region = region
        self.pathStyle = pathStyle ?? (endpoint != nil)
        self.credentials = credentials
        self.caBundle = caBundle
    }

    /// Reads `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (else the
    /// `AWS_PROFILE` or `default` profile of `~/.aws/credentials`, or `AWS_SHARED_CREDENTIALS_FILE`),
    /// `AWS_REGION` / `AWS_DEFAULT_REGION` (default us-east-1), `AWS_ENDPOINT_URL` (path-style
    /// addressing when given), `HAUL_S3_ADDRESSING` (`path` or `virtual`, overriding) and `AWS_CA_BUNDLE`.
    public static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment) throws -> S3Config {
        let credentials: S3Credentials
        if let key = env["AWS_ACCESS_KEY_ID"], !key.isEmpty, let secret = env["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty {
            credentials = S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: env["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        } else {
            let file = env["AWS_SHARED_CREDENTIALS_FILE"].flatMap { $0.isEmpty ? nil : $0 } ?? (env["HOME"].map { $0 + "/.aws/credentials" } ?? "")
            let profile = env["AWS_PROFILE"] ?? "default"
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            guard let found = profileCredentials(text, profile: profile) else {
                throw HaulError(
                    .s3Credentials, "no S3 credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set and \(file) has no profile '\(profile)'",
                    hint: "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL for a store other than AWS)")
            }
            credentials = found
        }
        let region = [env["AWS_REGION"], env["AWS_DEFAULT_REGION"]].compactMap { $0 }.first { !$0.isEmpty } ?? "us-east-1"
        let endpoint = env["AWS_ENDPOINT_URL_S3"].flatMap { $0.isEmpty ? nil : $0 } ?? env["AWS_ENDPOINT_URL"].flatMap { $0.isEmpty ? nil : $0 }
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
        let bundle = env["AWS_CA_BUNDLE"].flatMap { $0.isEmpty ? nil : $0 }
        return S3Config(endpoint: endpoint, region: region, pathStyle: pathStyle, credentials: credentials, caBundle: bundle)
    }

    /// The credentials of `[profile]` in an AWS credentials file, if it has a key id and secret.
    public static func profileCredentials(_ text: String, profile: String) -> S3Credentials? {
        var section = ""
        var values: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingWhitespace()
            if line.hasPrefix("#") || line.hasPrefix(";") || line.isEmpty { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast()).trimmingWhitespace()
                continue
            }
            guard section == profile, let equals = line.firstIndex(of: "=") else { continue }
            values[line[..<equals].trimmingWhitespace().lowercased()] = line[line.index(after: equals)...].trimmingWhitespace()
        }
        guard let key = values["aws_access_key_id"], let secret = values["aws_secret_access_key"] else { return nil }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: values["aws_session_token"])
    }
}
