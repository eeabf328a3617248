import Foundation
import HaulCore

extension CredentialSource {
    /// Fetches credentials from this source now (runs the process, calls STS or a metadata
    /// endpoint). Blocking; ``CredentialProvider`` caches the answer.
    func fetch(caBundle: String?) throws -> S3Credentials {
        switch self {
        case .fixed(let credentials, _):
            return credentials
        case .process(let command, _):
            return try CredentialProcess.run(command)
        case .webIdentity(let role, let file, let session, let sts):
            guard let token = try? String(contentsOfFile: file, encoding: .utf8).trimmingWhitespace(), !token.isEmpty else {
                throw HaulError(
                    .s3Credentials, "cannot read the web identity token file \(SafeText.cleanLine(file))",
                    hint: "check AWS_WEB_IDENTITY_TOKEN_FILE (or web_identity_token_file) and that the file is readable")
            }
            return try STS.assumeRoleWithWebIdentity(endpoint: sts, roleARN: role, sessionName: session, token: token, caBundle: caBundle)
        case .assumeRole(let role, let session, let externalID, let source, let sts, let region):
            let base = try source.fetch(caBundle: caBundle)
            return try STS.assumeRole(
                endpoint: sts, region: region, roleARN: role, sessionName: session, externalID: externalID, source: base, caBundle: caBundle)
        case .container(let url, let token, let tokenFile):
            var headers: [String] = []
            if let tokenFile {
                guard let value = try? String(contentsOfFile: tokenFile, encoding: .utf8).trimmingWhitespace() else {
                    throw HaulError(.s3Credentials, "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE \(SafeText.cleanLine(tokenFile))")
                }
                headers.append("Authorization: \(value)")
            } else if let token {
                headers.append("Authorization: \(token)")
            }
            let answer = try CredentialHTTP.send("GET", url, headers: headers, timeout: 5, what: "the container credentials endpoint \(url)")
            return try Self.metadataCredentials(status: answer.status, body: answer.body, from: "the container credentials endpoint \(url)")
        case .instanceMetadata(let endpoint):
            return try Self.instanceRole(endpoint)
        case .sso(let profile, let cacheFile, let account, let role, let portal):
            return try Self.ssoRole(profile: profile, cacheFile: cacheFile, account: account, role: role, portal: portal, caBundle: caBundle)
        }
    }

    /// The role's credentials from the SSO portal (`GetRoleCredentials`), with the token that
    /// `aws sso login` cached; an absent or expired token says to log in again.
    private static func ssoRole(profile: String, cacheFile: String, account: String, role: String, portal: String, caBundle: String?) throws
        -> S3Credentials
    {
        let login = HaulError(
            .s3Credentials, "the SSO session of AWS profile '\(SafeText.cleanLine(profile))' has expired or was never started",
            hint: "run `aws sso login --profile \(profile)`")
        guard let data = FileManager.default.contents(atPath: cacheFile),
            let cached = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any], let token = cached["accessToken"] as? String,
            let expires = (cached["expiresAt"] as? String).flatMap(AWSTime.parse), expires > Date()
        else { throw login }
        let query = "account_id=\(S3Request.encode(account, keepSlash: false))&role_name=\(S3Request.encode(role, keepSlash: false))"
        let answer = try CredentialHTTP.send(
            "GET", portal + "/federation/credentials?" + query, headers: ["x-amz-sso_bearer_token: \(token)"], caBundle: caBundle,
            what: "the SSO portal \(portal)")
        if answer.status == 401 || answer.status == 403 { throw login }
        guard answer.status == 200, let object = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any],
            let found = object["roleCredentials"] as? [String: Any], let key = found["accessKeyId"] as? String,
            let secret = found["secretAccessKey"] as? String
        else {
            throw HaulError(
                .s3Credentials, "the SSO portal \(portal) gave no credentials for role \(SafeText.cleanLine(role)) (HTTP \(answer.status))",
                hint: "check sso_account_id and sso_role_name of profile '\(profile)'", transient: answer.status >= 500)
        }
        let expiration = (found["expiration"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue / 1000) }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: found["sessionToken"] as? String, expiration: expiration)
    }

    /// IMDSv2: a session token, the role's name, then its credentials; short timeouts, as off
    /// EC2 nothing answers.
    private static func instanceRole(_ endpoint: String) throws -> S3Credentials {
        let what = "the EC2 instance metadata service at \(endpoint)"
        let none = { (detail: String) in
            HaulError(
                .s3Credentials, "no S3 credentials: none in the environment or the AWS profile, and \(what) \(detail)",
                hint: "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or set AWS_PROFILE (AWS_EC2_METADATA_DISABLED=true skips the instance role)")
        }
        let session: CredentialHTTP.Answer
        do {
            session = try CredentialHTTP.send(
                "PUT", endpoint + "/latest/api/token", headers: ["X-aws-ec2-metadata-token-ttl-seconds: 21600"], body: Data(), timeout: 2, what: what)
        } catch { throw none("did not answer") }
        guard session.status == 200 else { throw none("answered HTTP \(session.status) for a session token") }
        let header = "X-aws-ec2-metadata-token: " + String(decoding: session.body, as: UTF8.self).trimmingWhitespace()
        let base = endpoint + "/latest/meta-data/iam/security-credentials/"
        let roles = try CredentialHTTP.send("GET", base, headers: [header], timeout: 2, what: what)
        let role = String(decoding: roles.body, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard roles.status == 200, !role.isEmpty else { throw none("has no instance role (HTTP \(roles.status))") }
        let answer = try CredentialHTTP.send("GET", base + S3Request.encode(role, keepSlash: false), headers: [header], timeout: 2, what: what)
        return try metadataCredentials(status: answer.status, body: answer.body, from: "the instance role \(role)")
    }

    /// The credentials in a container or instance metadata answer (`AccessKeyId`,
    /// `SecretAccessKey`, `Token`, `Expiration`).
    public static func metadataCredentials(status: Int, body: Data, from: String) throws -> S3Credentials {
        guard status == 200, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let key = object["AccessKeyId"] as? String, let secret = object["SecretAccessKey"] as? String
        else {
            let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            let said = [object?["Code"] as? String, object?["Message"] as? String].compactMap { $0.map(SafeText.cleanLine) }.joined(separator: ": ")
            throw HaulError(
                .s3Credentials, "no credentials from \(from): HTTP \(status)\(said.isEmpty ? "" : " " + said)",
                hint: "check the role attached to this task or machine",
                transient: status >= 500)
        }
        let token = (object["Token"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        return S3Credentials(
            accessKeyID: key, secretAccessKey: secret, sessionToken: token, expiration: (object["Expiration"] as? String).flatMap(AWSTime.parse))
    }
}
