import Foundation
import HaulTestSupport
import Testing

/// Credentials found as the AWS CLI finds them, used by the real `haul` binary: a
/// `credential_process` profile, a web identity token exchanged at a (fake) STS, credentials
/// about to expire, and a store that says the session token expired.
@Suite("S3 storage: the credential chain")
struct S3CredentialChainTests {
    static let mib = 1_048_576

    @Test("a credential_process profile of ~/.aws/config with its endpoint and region stores the object; lasting credentials are asked for once")
    func credentialProcess() throws {
        let home = try Home()
        let bucket = try S3Bucket("process")
        let script = try home.process(expiresIn: "+1 hour")
        try home.config("[profile haul]\ncredential_process = \(script)\nregion = us-east-1\nendpoint_url = \(Harness.required("HAUL_TEST_S3_ENDPOINT"))\n")
        let file = try Origin.file("s3/process-\(UUID().uuidString.prefix(6)).bin", size: 12 * Self.mib + 5)
        let result = try Run.haul(
            ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/p.bin", "--segment-size", "5MiB"], database: TestDatabase().url,
            environment: home.environment(["AWS_PROFILE": "haul", "AWS_REGION": ""]))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try bucket.object("p.bin")?.sha256 == file.sha256)
        #expect(home.invocations == 1, "credentials valid for an hour are fetched once and reused")
        #expect(!result.stderr.contains(Harness.required("HAUL_TEST_S3_SECRET")))
    }

    @Test("credentials that expire within five minutes are fetched again before later requests, not used until they lapse")
    func expiringSession() throws {
        let home = try Home()
        let bucket = try S3Bucket("expiring")
        let script = try home.process(expiresIn: "+2 minutes")
        try home.config("[profile haul]\ncredential_process = \(script)\n")
        let file = try Origin.file("s3/expiring-\(UUID().uuidString.prefix(6)).bin", size: 12 * Self.mib + 5)
        let result = try Run.haul(
            ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/e.bin", "--segment-size", "5MiB"], database: TestDatabase().url,
            environment: home.environment(["AWS_PROFILE": "haul", "AWS_ENDPOINT_URL": Harness.required("HAUL_TEST_S3_ENDPOINT")]))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try bucket.object("e.bin")?.sha256 == file.sha256)
        #expect(home.invocations >= 3, "a multipart upload's requests each find the credentials about to expire: \(home.invocations) runs")
    }

    @Test("AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE (EKS IRSA): the token is exchanged at STS and its session signs the requests")
    func webIdentity() throws {
        let home = try Home()
        let moto = try MotoS3()
        let bucket = try S3Bucket("irsa", endpoint: moto.endpoint)
        try withFakeSTS(upstream: moto.endpoint) { endpoint in
            let token = home.path + "/token"
            try "eyJ.oidc-token-for-haul\n".write(toFile: token, atomically: true, encoding: .utf8)
            let role = "arn:aws:iam::123456789012:role/haul-writer"
            let file = try Origin.file("s3/irsa-\(UUID().uuidString.prefix(6)).bin", size: 100_003)
            let result = try Run.haul(
                ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/w.bin"], database: TestDatabase().url,
                environment: home.environment([
                    "AWS_ROLE_ARN": role, "AWS_WEB_IDENTITY_TOKEN_FILE": token, "AWS_ENDPOINT_URL_STS": endpoint, "AWS_ENDPOINT_URL": endpoint,
                ]))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try bucket.object("w.bin")?.sha256 == file.sha256)
            let log = try Self.log(endpoint)
            #expect(log.filter { $0.hasPrefix("STS ") } == ["STS AssumeRoleWithWebIdentity \(role) eyJ.oidc-token-for-haul"], "\(log)")
            let s3 = log.filter { $0.hasPrefix("S3 ") }
            #expect(!s3.isEmpty && s3.allSatisfy { $0.hasSuffix(" sts-token-1") }, "every S3 request carries the STS session: \(log)")
            #expect(!result.stderr.contains("oidc-token"))
        }
    }

    @Test("a store answering ExpiredToken makes Haul fetch new credentials and send again; a token it cannot renew is named in one line")
    func expiredToken() throws {
        let home = try Home()
        let moto = try MotoS3()
        let bucket = try S3Bucket("expired", endpoint: moto.endpoint)
        try withFakeSTS(upstream: moto.endpoint) { endpoint in
            let script = try home.process(expiresIn: "+1 hour", tokens: true, firstToken: "expired-1")
            try home.config("[profile haul]\ncredential_process = \(script)\n")
            let file = try Origin.file("s3/expired-\(UUID().uuidString.prefix(6)).bin", size: 100_003)
            let renewed = try Run.haul(
                ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/x.bin"], database: TestDatabase().url,
                environment: home.environment(["AWS_PROFILE": "haul", "AWS_ENDPOINT_URL": endpoint]))
            #expect(renewed.status == 0, "\(renewed.stderr)")
            #expect(try bucket.object("x.bin")?.sha256 == file.sha256)
            #expect(home.invocations == 2, "fetched once, then again after ExpiredToken")
            let tokens = try Self.log(endpoint).filter { $0.hasPrefix("S3 ") }.map { $0.split(separator: " ").last.map(String.init) ?? "" }
            #expect(tokens.first == "expired-1" && tokens.dropFirst().allSatisfy { $0 == "fresh-2" }, "\(tokens)")

            var fixed = home.environment(["AWS_ENDPOINT_URL": endpoint, "AWS_SESSION_TOKEN": "expired-static"])
            fixed["AWS_ACCESS_KEY_ID"] = Harness.required("HAUL_TEST_S3_KEY")
            fixed["AWS_SECRET_ACCESS_KEY"] = Harness.required("HAUL_TEST_S3_SECRET")
            let refused = try Run.haul(
                ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/y.bin"], database: TestDatabase().url, environment: fixed)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("ExpiredToken") && refused.stderr.contains("AWS_SESSION_TOKEN"), "\(refused.stderr)")
            #expect(!refused.stderr.contains("expired-static") && !refused.stderr.contains(Harness.required("HAUL_TEST_S3_SECRET")))
            #expect(try bucket.object("y.bin") == nil)
        }
    }

    @Test("a profile's role_arn with a source_profile is assumed at STS, signed with the source's key, and its session signs the requests")
    func assumeRole() throws {
        let home = try Home()
        let moto = try MotoS3()
        let bucket = try S3Bucket("role", endpoint: moto.endpoint)
        try withFakeSTS(upstream: moto.endpoint) { endpoint in
            let role = "arn:aws:iam::123456789012:role/writer"
            try home.config("[profile writer]\nrole_arn = \(role)\nsource_profile = base\nrole_session_name = nightly\n")
            try home.credentials("[base]\naws_access_key_id = BASEKEY\naws_secret_access_key = base-secret\n")
            let file = try Origin.file("s3/role-\(UUID().uuidString.prefix(6)).bin", size: 100_003)
            let result = try Run.haul(
                ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/r.bin"], database: TestDatabase().url,
                environment: home.environment(["AWS_PROFILE": "writer", "AWS_ENDPOINT_URL": endpoint]))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try bucket.object("r.bin")?.sha256 == file.sha256)
            let log = try Self.log(endpoint)
            #expect(log.filter { $0.hasPrefix("STS ") } == ["STS AssumeRole \(role) BASEKEY"], "\(log)")
            let s3 = log.filter { $0.hasPrefix("S3 ") }
            #expect(!s3.isEmpty && s3.allSatisfy { $0.hasSuffix(" sts-token-1") }, "\(log)")
            #expect(!result.stderr.contains("base-secret"))
        }
    }

    @Test("the ECS container endpoint (with its authorization token) and the EC2 instance role over IMDSv2 give the credentials", arguments: ["ecs", "imds"])
    func machineRoles(kind: String) throws {
        let home = try Home()
        let moto = try MotoS3()
        let bucket = try S3Bucket(kind, endpoint: moto.endpoint)
        try withFakeSTS(upstream: moto.endpoint) { endpoint in
            let settings =
                kind == "ecs"
                ? ["AWS_CONTAINER_CREDENTIALS_FULL_URI": endpoint + "/container-credentials", "AWS_CONTAINER_AUTHORIZATION_TOKEN": "secret-auth"]
                : ["AWS_EC2_METADATA_DISABLED": "", "AWS_EC2_METADATA_SERVICE_ENDPOINT": endpoint]
            let file = try Origin.file("s3/\(kind)-\(UUID().uuidString.prefix(6)).bin", size: 100_003)
            let result = try Run.haul(
                ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/m.bin"], database: TestDatabase().url,
                environment: home.environment(settings.merging(["AWS_ENDPOINT_URL": endpoint]) { $1 }))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try bucket.object("m.bin")?.sha256 == file.sha256)
            let log = try Self.log(endpoint)
            let token = kind == "ecs" ? "container-token" : "imds-session"
            let s3 = log.filter { $0.hasPrefix("S3 ") }
            #expect(!s3.isEmpty && s3.allSatisfy { $0.hasSuffix(" " + token) }, "\(log)")
            if kind == "ecs" {
                #expect(log.filter { $0.hasPrefix("ECS ") } == ["ECS secret-auth"], "\(log)")
            } else {
                #expect(
                    log.contains("IMDS PUT /latest/api/token -") && log.contains("IMDS GET /latest/meta-data/iam/security-credentials/haul-role imds-token"),
                    "\(log)")
            }
            #expect(!result.stderr.contains("secret-auth"))
        }
    }

    @Test("an SSO profile uses the token `aws sso login` cached; without a valid one the error says to log in")
    func sso() throws {
        let home = try Home()
        let moto = try MotoS3()
        let bucket = try S3Bucket("sso", endpoint: moto.endpoint)
        try withFakeSTS(upstream: moto.endpoint) { endpoint in
            try home.config(
                "[profile dev]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = Writer\n"
                    + "[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-west-1\n")
            // The CLI names the cache file by the SHA-1 of the session name: sha1("corp").
            let cache = home.path + "/.aws/sso/cache"
            try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
            let login = { (expires: String) in
                let text =
                    #"{"startUrl": "https://corp.awsapps.com/start", "region": "eu-west-1", "accessToken": "sso-access-token", "expiresAt": "\#(expires)"}"#
                try text.write(toFile: cache + "/ee0bfd2552fbd840c02cc48b6e823320543c450f.json", atomically: true, encoding: .utf8)
            }
            let environment = home.environment(["AWS_PROFILE": "dev", "AWS_ENDPOINT_URL": endpoint])
            let file = try Origin.file("s3/sso-\(UUID().uuidString.prefix(6)).bin", size: 100_003)
            try login("2000-01-01T00:00:00Z")
            let expired = try Run.haul(
                ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/s.bin"], database: TestDatabase().url, environment: environment)
            #expect(expired.status != 0)
            #expect(expired.stderr.contains("aws sso login --profile dev"), "\(expired.stderr)")
            try login("2099-01-01T00:00:00Z")
            let result = try Run.haul(
                ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/s.bin"], database: TestDatabase().url, environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try bucket.object("s.bin")?.sha256 == file.sha256)
            let log = try Self.log(endpoint)
            #expect(log.filter { $0.hasPrefix("SSO ") } == ["SSO 123456789012 Writer sso-access-token"], "\(log)")
            let s3 = log.filter { $0.hasPrefix("S3 ") }
            #expect(!s3.isEmpty && s3.allSatisfy { $0.hasSuffix(" sso-session") }, "\(log)")
            #expect(!result.stderr.contains("sso-access-token") && !expired.stderr.contains("sso-access-token"))
        }
    }

    /// Runs `body` with `Faults/sts_s3.py` (a fake STS relaying S3 to moto at `upstream`, which
    /// takes any session token) at `http://127.0.0.1:PORT`.
    private func withFakeSTS(upstream: String, _ body: (_ endpoint: String) throws -> Void) throws {
        let (fake, port) = try ScriptOrigin.start(
            "sts_s3.py", [upstream, Harness.required("HAUL_TEST_S3_KEY"), Harness.required("HAUL_TEST_S3_SECRET")],
            what: "fake STS")
        defer {
            fake.signal(SIGKILL)
            _ = fake.wait(timeout: 5)
        }
        try body("http://127.0.0.1:\(port)")
    }

    private static func log(_ endpoint: String) throws -> [String] {
        let result = try Run.program("/usr/bin/curl", ["-sS", endpoint + "/_log"], environment: [:])
        return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String]) ?? []
    }

    /// A HOME with `.aws/config`, an environment without any other AWS setting, and
    /// `credential_process` scripts that count their runs.
    private struct Home {
        let path = Harness.temporaryDirectory("aws-home")

        init() throws { try FileManager.default.createDirectory(atPath: path + "/.aws", withIntermediateDirectories: true) }

        func config(_ text: String) throws { try text.write(toFile: path + "/.aws/config", atomically: true, encoding: .utf8) }

        func credentials(_ text: String) throws { try text.write(toFile: path + "/.aws/credentials", atomically: true, encoding: .utf8) }

        /// A script printing the test store's keys that expire at `date -d expiresIn`, with
        /// `tokens` a session token (`firstToken` on the first run, then `fresh-<run>`; SeaweedFS
        /// refuses tokens it did not issue, moto takes any).
        func process(expiresIn: String, tokens: Bool = false, firstToken: String? = nil) throws -> String {
            let script = path + "/credentials.sh"
            let text = """
                #!/bin/sh
                echo run >> '\(path)/runs'
                n=$(wc -l < '\(path)/runs')
                token="fresh-$n"
                [ "$n" -eq 1 ] && [ -n '\(firstToken ?? "")' ] && token='\(firstToken ?? "")'
                printf '{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s", \(tokens ? #""SessionToken": "'"$token"'", "# : "")"Expiration": "%s"}\\n' \
                  '\(Harness.required("HAUL_TEST_S3_KEY"))' '\(Harness.required("HAUL_TEST_S3_SECRET"))' \
                  "$(date -u -d '\(expiresIn)' +%Y-%m-%dT%H:%M:%SZ)"

                """
            try text.write(toFile: script, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
            return script
        }

        /// How often a `process` script ran.
        var invocations: Int { ((try? String(contentsOfFile: path + "/runs", encoding: .utf8)) ?? "").split(separator: "\n").count }

        func environment(_ extra: [String: String]) -> [String: String] {
            var environment = ["HOME": path, "AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": "us-east-1"]
            for name in [
                "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE",
                "AWS_SHARED_CREDENTIALS_FILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            ] {
                environment[name] = ""
            }
            return environment.merging(extra) { $1 }
        }
    }
}
