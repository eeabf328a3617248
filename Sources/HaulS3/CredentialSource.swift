import Foundation
import HaulCore

/// Where S3 credentials come from, found the way the AWS CLI (botocore) looks, in its order:
/// keys in the environment; the profile's `role_arn` (assumed with its `source_profile`,
/// `credential_source` or `web_identity_token_file`); a web identity token from the
/// environment (EKS IRSA); the profile's SSO role; its keys; its `credential_process`; the ECS container
/// endpoint; the EC2 instance role (IMDSv2). ``resolve(env:config:credentials:)`` is pure:
/// nothing is fetched until a ``CredentialProvider`` asks.
public indirect enum CredentialSource: Sendable, Hashable {
    /// Keys known now (the environment, a profile).
    case fixed(S3Credentials, from: String)
    /// A profile's `credential_process` command.
    case process(command: String, profile: String)
    /// `AssumeRoleWithWebIdentity` with the token in `tokenFile`, read at each refresh.
    case webIdentity(roleARN: String, tokenFile: String, sessionName: String, sts: String)
    /// `AssumeRole` signed with the credentials of `source`.
    case assumeRole(roleARN: String, sessionName: String, externalID: String?, source: CredentialSource, sts: String, region: String)
    /// IAM Identity Center (SSO): the role's credentials from the portal at `portal`, for the
    /// token `aws sso login` left in `cacheFile`.
    case sso(profile: String, cacheFile: String, accountID: String, roleName: String, portal: String)
    /// The ECS (or EKS Pod Identity) container credentials endpoint.
    case container(url: String, token: String?, tokenFile: String?)
    /// The EC2 instance metadata service, IMDSv2.
    case instanceMetadata(endpoint: String)

    /// What the source is, for messages; never a secret.
    public var name: String {
        switch self {
        case .fixed(_, let from): from
        case .process(_, let profile): "the credential_process of profile '\(profile)'"
        case .webIdentity(let role, let file, _, _): "role \(role) assumed with the web identity token in \(file)"
        case .assumeRole(let role, _, _, let source, _, _): "role \(role) assumed with \(source.name)"
        case .sso(let profile, _, _, let role, _): "the SSO role \(role) of profile '\(profile)'"
        case .container(let url, _, _): "the container credentials endpoint \(url)"
        case .instanceMetadata(let endpoint): "the EC2 instance role (metadata service at \(endpoint))"
        }
    }

    /// The source for `env` and the parsed shared files. The profile is `AWS_PROFILE` (else
    /// `AWS_DEFAULT_PROFILE`, else `default`); a profile named but in neither file, a role whose
    /// source is missing or circular, and an incomplete SSO profile are refused.
    public static func resolve(env: [String: String], config: AWSConfigFile, credentials: AWSConfigFile) throws -> CredentialSource {
        func setting(_ name: String) -> String? { env[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let key = setting("AWS_ACCESS_KEY_ID"), let secret = setting("AWS_SECRET_ACCESS_KEY") {
            return .fixed(S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: setting("AWS_SESSION_TOKEN")), from: "AWS_ACCESS_KEY_ID")
        }
        let named = setting("AWS_PROFILE") ?? setting("AWS_DEFAULT_PROFILE")
        let name = named ?? "default"
        let profile = AWSConfigFile.profile(name, config: config, credentials: credentials)
        if named != nil && profile == nil {
            throw HaulError(
                .s3Credentials, "AWS profile '\(SafeText.cleanLine(name))' is in neither ~/.aws/config nor ~/.aws/credentials",
                hint: "check AWS_PROFILE, or set AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE to the files that have it")
        }
        let resolver = ProfileResolver(env: env, config: config, credentials: credentials)
        if let profile, profile["role_arn"] != nil { return try resolver.role(name, profile, visited: [name]) }
        if let role = setting("AWS_ROLE_ARN"), let file = setting("AWS_WEB_IDENTITY_TOKEN_FILE") {
            let session = setting("AWS_ROLE_SESSION_NAME") ?? ProfileResolver.sessionName()
            return .webIdentity(roleARN: role, tokenFile: file, sessionName: session, sts: resolver.stsEndpoint(profile ?? [:]))
        }
        if let profile, let found = try resolver.own(name, profile) { return found }
        if let relative = setting("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
            return .container(url: "http://169.254.170.2" + relative, token: setting("AWS_CONTAINER_AUTHORIZATION_TOKEN"), tokenFile: nil)
        }
        if let full = setting("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
            return try container(full, token: setting("AWS_CONTAINER_AUTHORIZATION_TOKEN"), tokenFile: setting("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"))
        }
        if setting("AWS_EC2_METADATA_DISABLED")?.lowercased() != "true" {
            return .instanceMetadata(endpoint: (setting("AWS_EC2_METADATA_SERVICE_ENDPOINT") ?? "http://169.254.169.254").trimmingTrailingSlashes)
        }
        throw HaulError(
            .s3Credentials,
            "no S3 credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set and profile '\(SafeText.cleanLine(name))' has none"
                + " (nor a web identity, container or instance role)",
            hint: "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL for a store other than AWS), or set AWS_PROFILE")
    }

    /// A full container endpoint URL, which the SDKs accept over HTTPS anywhere and over plain
    /// HTTP only on this machine or the ECS/EKS link-local addresses (the token goes with it).
    static func container(_ url: String, token: String?, tokenFile: String?) throws -> CredentialSource {
        let allowed = ["http://127.", "http://localhost", "http://[::1]", "http://169.254.170.2", "http://169.254.170.23", "http://[fd00:ec2::23]"]
        guard url.hasPrefix("https://") || allowed.contains(where: url.hasPrefix) else {
            throw HaulError(
                .s3Credentials, "AWS_CONTAINER_CREDENTIALS_FULL_URI '\(SafeText.cleanLine(url))' is plain HTTP to a host other than this machine",
                hint: "use https://, a loopback address, or the ECS/EKS endpoint")
        }
        return .container(url: url, token: token, tokenFile: tokenFile)
    }
}

/// Reads the settings of one profile and the profiles it names.
struct ProfileResolver {
    let env: [String: String]
    let config: AWSConfigFile
    let credentials: AWSConfigFile

    /// `haul-<seconds>`, as the SDKs name sessions nobody named.
    static func sessionName() -> String { "haul-\(Int(Date().timeIntervalSince1970))" }

    var region: String {
        let profile = AWSConfigFile.profile(env["AWS_PROFILE"] ?? env["AWS_DEFAULT_PROFILE"] ?? "default", config: config, credentials: credentials)
        return [env["AWS_REGION"], env["AWS_DEFAULT_REGION"], profile?["region"]].compactMap { $0 }.first { !$0.isEmpty } ?? "us-east-1"
    }

    func stsEndpoint(_ profile: [String: String]) -> String {
        let services = profile["services"].map { config.service("sts", in: $0) } ?? [:]
        return STS.endpoint(env: env, profile: profile, services: services, region: region)
    }

    /// The source of a profile with `role_arn`.
    func role(_ name: String, _ profile: [String: String], visited: Set<String>) throws -> CredentialSource {
        let role = profile["role_arn"] ?? ""
        let session = profile["role_session_name"] ?? env["AWS_ROLE_SESSION_NAME"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.sessionName()
        let sts = stsEndpoint(profile)
        if let file = profile["web_identity_token_file"] {
            return .webIdentity(roleARN: role, tokenFile: file, sessionName: session, sts: sts)
        }
        let source: CredentialSource
        if let sourceName = profile["source_profile"] {
            guard let sourceProfile = AWSConfigFile.profile(sourceName, config: config, credentials: credentials) else {
                throw refused(name, "names source_profile '\(sourceName)', which is in neither file")
            }
            if sourceName != name, sourceProfile["role_arn"] != nil {
                guard !visited.contains(sourceName) else { throw refused(name, "has a source_profile chain that comes back to '\(sourceName)'") }
                source = try self.role(sourceName, sourceProfile, visited: visited.union([sourceName]))
            } else if let own = try own(sourceName, sourceProfile) {
                source = own
            } else {
                throw refused(name, "names source_profile '\(sourceName)', which has no credentials")
            }
        } else if let kind = profile["credential_source"] {
            switch kind {
            case "Environment":
                guard let key = env["AWS_ACCESS_KEY_ID"], let secret = env["AWS_SECRET_ACCESS_KEY"], !key.isEmpty, !secret.isEmpty else {
                    throw refused(name, "has credential_source Environment but AWS_ACCESS_KEY_ID is not set")
                }
                source = .fixed(S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: env["AWS_SESSION_TOKEN"]), from: "AWS_ACCESS_KEY_ID")
            case "Ec2InstanceMetadata":
                source = .instanceMetadata(endpoint: (env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] ?? "http://169.254.169.254").trimmingTrailingSlashes)
            case "EcsContainer":
                if let relative = env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] {
                    source = .container(url: "http://169.254.170.2" + relative, token: env["AWS_CONTAINER_AUTHORIZATION_TOKEN"], tokenFile: nil)
                } else if let full = env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] {
                    source = try CredentialSource.container(
                        full, token: env["AWS_CONTAINER_AUTHORIZATION_TOKEN"], tokenFile: env["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"])
                } else {
                    throw refused(name, "has credential_source EcsContainer but no AWS_CONTAINER_CREDENTIALS_* variable is set")
                }
            default:
                throw refused(name, "has credential_source '\(kind)', not Environment, Ec2InstanceMetadata or EcsContainer")
            }
        } else {
            throw refused(name, "has role_arn but no source_profile, credential_source or web_identity_token_file")
        }
        let region = profile["region"] ?? self.region
        return .assumeRole(roleARN: role, sessionName: session, externalID: profile["external_id"], source: source, sts: sts, region: region)
    }

    /// The credentials a profile holds itself: SSO, keys, `credential_process`.
    func own(_ name: String, _ profile: [String: String]) throws -> CredentialSource? {
        if profile["sso_session"] != nil || profile["sso_start_url"] != nil, profile["aws_access_key_id"] == nil {
            return try sso(name, profile)
        }
        if let key = profile["aws_access_key_id"], let secret = profile["aws_secret_access_key"], !key.isEmpty, !secret.isEmpty {
            let keys = S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: profile["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 })
            return .fixed(keys, from: "profile '\(name)'")
        }
        if let command = profile["credential_process"], !command.isEmpty { return .process(command: command, profile: name) }
        return nil
    }

    /// An SSO profile: `sso_session` naming an `[sso-session]` section (or the older
    /// `sso_start_url` / `sso_region` in the profile), `sso_account_id` and `sso_role_name`.
    /// The token's cache file is named by the SHA-1 of the session name (or start URL), as the
    /// CLI names it.
    func sso(_ name: String, _ profile: [String: String]) throws -> CredentialSource {
        let session = profile["sso_session"].flatMap { config.sections["sso-session " + $0] }
        let key = profile["sso_session"] ?? profile["sso_start_url"] ?? ""
        guard let region = session?["sso_region"] ?? profile["sso_region"], let account = profile["sso_account_id"],
            let role = profile["sso_role_name"], profile["sso_session"] == nil || session != nil
        else {
            throw HaulError(
                .s3Credentials,
                "AWS profile '\(SafeText.cleanLine(name))' signs in with IAM Identity Center (SSO) but lacks its sso-session section, sso_region, sso_account_id or sso_role_name",
                hint: "run `aws configure sso --profile \(name)`, then `aws sso login --profile \(name)`")
        }
        let digester = Digester(.sha1)
        Array(key.utf8).withUnsafeBytes { digester.update($0) }
        let cache = (env["HOME"] ?? "") + "/.aws/sso/cache/" + digester.finish().hex + ".json"
        let services = profile["services"].map { config.service("sso", in: $0) } ?? [:]
        let configured = [env["AWS_ENDPOINT_URL_SSO"], services["endpoint_url"], env["AWS_ENDPOINT_URL"], profile["endpoint_url"]]
        let portal = configured.compactMap { $0 }.first { !$0.isEmpty } ?? "https://portal.sso.\(region).amazonaws.com"
        return .sso(profile: name, cacheFile: cache, accountID: account, roleName: role, portal: portal.trimmingTrailingSlashes)
    }

    private func refused(_ name: String, _ why: String) -> HaulError {
        HaulError(.s3Credentials, "AWS profile '\(SafeText.cleanLine(name))' \(SafeText.cleanLine(why))", hint: "fix the profile in ~/.aws/config")
    }
}
