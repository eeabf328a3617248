import Foundation
import HaulCore

/// The two AWS STS calls the credential chain makes, as form POSTs whose XML answers are read
/// with ``S3XML``: `AssumeRoleWithWebIdentity` (unsigned: the token is the proof) and
/// `AssumeRole` (signed with the source profile's credentials).
public enum STS {
    /// Where STS is: `AWS_ENDPOINT_URL_STS`, the profile's `[services]` `sts` `endpoint_url`,
    /// `AWS_ENDPOINT_URL`, the profile's `endpoint_url`, else AWS's regional endpoint.
    public static func endpoint(env: [String: String], profile: [String: String], services: [String: String], region: String) -> String {
        let configured = [env["AWS_ENDPOINT_URL_STS"], services["endpoint_url"], env["AWS_ENDPOINT_URL"], profile["endpoint_url"]]
        let found = configured.compactMap { $0 }.first { !$0.isEmpty }
        return (found ?? "https://sts.\(region).amazonaws.com").trimmingTrailingSlashes
    }

    /// Exchanges the OIDC `token` for credentials of `roleARN`.
    static func assumeRoleWithWebIdentity(endpoint: String, roleARN: String, sessionName: String, token: String, caBundle: String?) throws -> S3Credentials {
        let form = [
            ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", roleARN), ("RoleSessionName", sessionName),
            ("WebIdentityToken", token),
        ]
        return try call(endpoint: endpoint, form: form, signing: nil, caBundle: caBundle, doing: "assume role \(roleARN) with a web identity token")
    }

    /// Assumes `roleARN` with `source` credentials.
    static func assumeRole(
        endpoint: String, region: String, roleARN: String, sessionName: String, externalID: String?, source: S3Credentials, caBundle: String?
    ) throws -> S3Credentials {
        var form = [("Action", "AssumeRole"), ("Version", "2011-06-15"), ("RoleArn", roleARN), ("RoleSessionName", sessionName)]
        if let externalID { form.append(("ExternalId", externalID)) }
        let signing = CredentialHTTP.Signing(region: region, service: "sts", credentials: source)
        return try call(endpoint: endpoint, form: form, signing: signing, caBundle: caBundle, doing: "assume role \(roleARN)")
    }

    private static func call(
        endpoint: String, form: [(String, String)], signing: CredentialHTTP.Signing?, caBundle: String?, doing: String
    ) throws -> S3Credentials {
        let body = form.map { S3Request.encode($0.0, keepSlash: false) + "=" + S3Request.encode($0.1, keepSlash: false) }.joined(separator: "&")
        let answer = try CredentialHTTP.send(
            "POST", endpoint + "/", headers: ["Content-Type: application/x-www-form-urlencoded; charset=utf-8"], body: Data(body.utf8),
            signing: signing, caBundle: caBundle, what: "STS at \(endpoint) to \(doing)")
        return try credentials(status: answer.status, xml: String(decoding: answer.body, as: UTF8.self), doing: "\(doing) at \(endpoint)")
    }

    /// The credentials in an STS answer, or the error it stands for (naming STS's code).
    public static func credentials(status: Int, xml: String, doing: String) throws -> S3Credentials {
        guard (200...299).contains(status), let block = S3XML.blocks("Credentials", in: xml).first,
            let key = S3XML.value("AccessKeyId", in: block), let secret = S3XML.value("SecretAccessKey", in: block)
        else {
            let code = S3XML.value("Code", in: xml).map(SafeText.cleanLine)
            let message = S3XML.value("Message", in: xml).map(SafeText.cleanLine)
            let said = ["HTTP \(status)", code, message].compactMap { $0 }.joined(separator: " ")
            throw HaulError(
                .s3Credentials, "cannot \(doing): STS answered \(said)", hint: "check the role's trust policy and the credentials that assume it",
                transient: status >= 500 || code == "Throttling")
        }
        let expiration = S3XML.value("Expiration", in: block).flatMap(AWSTime.parse)
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: S3XML.value("SessionToken", in: block), expiration: expiration)
    }
}
