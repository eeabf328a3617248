import Foundation
import HaulCore
import Synchronization
import Testing

@testable import HaulS3

@Suite("AWS credential chain")
struct CredentialChainTests {
    let config = AWSConfigFile(
        parsing: """
            # comment
            [default]
            region = eu-west-1
            [profile dev]
            role_arn = arn:aws:iam::1:role/dev
            source_profile = base
            external_id = x-1
            [profile base]
            region = eu-central-1
            ; comment
            [profile tool]
            credential_process = /opt/creds --json
            services = local
            [profile irsa]
            role_arn = arn:aws:iam::1:role/web
            web_identity_token_file = /var/run/token
            [profile loop]
            role_arn = arn:aws:iam::1:role/loop
            source_profile = loop2
            [profile loop2]
            role_arn = arn:aws:iam::1:role/loop2
            source_profile = loop
            [profile sso]
            sso_session = corp
            sso_account_id = 1
            [services local]
            s3 =
              endpoint_url = http://127.0.0.1:9000
            sts =
              endpoint_url = http://127.0.0.1:9001
            """)
    let keys = AWSConfigFile(
        parsing: "[base]\naws_access_key_id = BASE\naws_secret_access_key = base-secret\n[default]\naws_access_key_id = D\naws_secret_access_key = DS\n")

    @Test("config files: sections, comments, nested service settings, profiles merged with the credentials file")
    func files() {
        #expect(config.sections["profile dev"]?["external_id"] == "x-1")
        #expect(config.service("s3", in: "local") == ["endpoint_url": "http://127.0.0.1:9000"])
        let merged = AWSConfigFile.profile("base", config: config, credentials: keys)
        #expect(merged?["region"] == "eu-central-1" && merged?["aws_access_key_id"] == "BASE")
        #expect(AWSConfigFile.profile("default", config: config, credentials: keys)?["region"] == "eu-west-1")
        #expect(AWSConfigFile.profile("none", config: config, credentials: keys) == nil)
    }

    @Test("the chain in the CLI's order: environment keys, the profile's role, web identity, profile keys, credential_process, container, instance role")
    func order() throws {
        let none = AWSConfigFile()
        let envKeys = ["AWS_ACCESS_KEY_ID": "E", "AWS_SECRET_ACCESS_KEY": "ES", "AWS_PROFILE": "dev"]
        #expect(
            try CredentialSource.resolve(env: envKeys, config: config, credentials: keys)
                == .fixed(S3Credentials(accessKeyID: "E", secretAccessKey: "ES"), from: "AWS_ACCESS_KEY_ID"))
        guard
            case .assumeRole(let role, _, let external, let source, let sts, let region) = try CredentialSource.resolve(
                env: ["AWS_PROFILE": "dev"], config: config, credentials: keys)
        else {
            Issue.record("dev assumes a role")
            return
        }
        #expect(role == "arn:aws:iam::1:role/dev" && external == "x-1" && sts == "https://sts.us-east-1.amazonaws.com" && region == "us-east-1")
        #expect(source == .fixed(S3Credentials(accessKeyID: "BASE", secretAccessKey: "base-secret"), from: "profile 'base'"))
        let irsa = ["AWS_ROLE_ARN": "arn:r", "AWS_WEB_IDENTITY_TOKEN_FILE": "/t", "AWS_ROLE_SESSION_NAME": "s", "AWS_ENDPOINT_URL_STS": "http://sts:1/"]
        #expect(
            try CredentialSource.resolve(env: irsa, config: config, credentials: keys)
                == .webIdentity(roleARN: "arn:r", tokenFile: "/t", sessionName: "s", sts: "http://sts:1"))
        guard case .webIdentity(_, "/var/run/token", _, _) = try CredentialSource.resolve(env: ["AWS_PROFILE": "irsa"], config: config, credentials: keys)
        else {
            Issue.record("irsa reads its token file")
            return
        }
        #expect(
            try CredentialSource.resolve(env: [:], config: config, credentials: keys)
                == .fixed(S3Credentials(accessKeyID: "D", secretAccessKey: "DS"), from: "profile 'default'"))
        #expect(
            try CredentialSource.resolve(env: ["AWS_PROFILE": "tool"], config: config, credentials: keys)
                == .process(command: "/opt/creds --json", profile: "tool"))
        #expect(
            try CredentialSource.resolve(
                env: ["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/c", "AWS_CONTAINER_AUTHORIZATION_TOKEN": "t"], config: none, credentials: none)
                == .container(url: "http://169.254.170.2/v2/c", token: "t", tokenFile: nil))
        #expect(try CredentialSource.resolve(env: [:], config: none, credentials: none) == .instanceMetadata(endpoint: "http://169.254.169.254"))
    }

    @Test("refused in one line: an unknown profile, a circular role chain, SSO (naming aws sso login), nothing at all, container over plain HTTP elsewhere")
    func refusals() {
        let none = AWSConfigFile()
        for (env, words) in [
            (["AWS_PROFILE": "nope"], "'nope' is in neither"), (["AWS_PROFILE": "loop"], "comes back"), (["AWS_PROFILE": "sso"], "aws configure sso"),
            (["AWS_EC2_METADATA_DISABLED": "true"], "no S3 credentials"),
            (["AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://evil.example/creds"], "plain HTTP"),
        ] {
            do {
                _ = try CredentialSource.resolve(
                    env: env, config: env["AWS_PROFILE"] == nil ? none : config, credentials: env["AWS_PROFILE"] == nil ? none : keys)
                Issue.record("\(env) resolved")
            } catch let error as HaulError {
                #expect(error.code == .s3Credentials && error.description.contains(words), "\(error)")
            } catch { Issue.record("\(error)") }
        }
    }

    @Test("credential_process JSON: version 1 with token and expiration; other versions and missing keys refused without showing the output")
    func processOutput() throws {
        let good = #"{"Version": 1, "AccessKeyId": "AK", "SecretAccessKey": "hush", "SessionToken": "tok", "Expiration": "2030-01-02T03:04:05Z"}"#
        let read = try CredentialProcess.parse(Data(good.utf8), command: "c")
        #expect(read.accessKeyID == "AK" && read.sessionToken == "tok" && read.expiration == Date(timeIntervalSince1970: 1_893_553_445))
        #expect(try CredentialProcess.parse(Data(#"{"Version":1,"AccessKeyId":"A","SecretAccessKey":"S"}"#.utf8), command: "c").expiration == nil)
        for bad in [
            #"{"Version": 2, "AccessKeyId": "A", "SecretAccessKey": "hush"}"#, #"{"Version": 1, "AccessKeyId": "A"}"#, "hush",
            #"{"Version":1,"AccessKeyId":"A","SecretAccessKey":"hush","Expiration":"soon"}"#,
        ] {
            #expect(throws: HaulError.self) { try CredentialProcess.parse(Data(bad.utf8), command: "c") }
            do { _ = try CredentialProcess.parse(Data(bad.utf8), command: "c") } catch { #expect(!"\(error)".contains("hush")) }
        }
        #expect(try CredentialProcess.run("printf '%s' '\(good)'").accessKeyID == "AK")
        do {
            _ = try CredentialProcess.run("false --token=hush-arg")
            Issue.record("a failing command gave credentials")
        } catch { #expect("\(error)".contains("'false' exited with status 1") && !"\(error)".contains("hush-arg"), "\(error)") }
    }

    @Test("STS answers: credentials with their expiration, or the error naming STS's code")
    func stsAnswers() throws {
        let xml = """
            <AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>ASIA1</AccessKeyId><SecretAccessKey>s&amp;k</SecretAccessKey>
            <SessionToken>tok</SessionToken><Expiration>2030-01-02T03:04:05.000Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>
            """
        let read = try STS.credentials(status: 200, xml: xml, doing: "assume")
        #expect(read.secretAccessKey == "s&k" && read.sessionToken == "tok" && read.expiration == Date(timeIntervalSince1970: 1_893_553_445))
        let denied = "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>Not authorized</Message></Error></ErrorResponse>"
        do {
            _ = try STS.credentials(status: 403, xml: denied, doing: "assume role r")
            Issue.record("an error answer gave credentials")
        } catch let error as HaulError {
            #expect(error.description.contains("AccessDenied") && error.description.contains("assume role r") && !error.isTransient)
        }
        #expect(STS.endpoint(env: [:], profile: ["endpoint_url": "http://p"], services: [:], region: "r") == "http://p")
        #expect(STS.endpoint(env: ["AWS_ENDPOINT_URL": "http://g"], profile: [:], services: ["endpoint_url": "http://s"], region: "r") == "http://s")
        let metadata = #"{"Code": "Success", "AccessKeyId": "A", "SecretAccessKey": "S", "Token": "T", "Expiration": "2030-01-02T03:04:05Z"}"#
        #expect(try CredentialSource.metadataCredentials(status: 200, body: Data(metadata.utf8), from: "x").sessionToken == "T")
    }

    @Test("the provider reuses credentials until five minutes before they expire, keeps valid ones when a refresh fails, and forgets them on request")
    func caching() throws {
        let runs = Mutex(0)
        let failing = Mutex(false)
        let lifetime = Mutex<TimeInterval>(3600)
        let provider = CredentialProvider(source: .process(command: "c", profile: "p")) {
            if failing.withLock({ $0 }) { throw HaulError(.s3Credentials, "down") }
            let run = runs.withLock { count in
                count += 1
                return count
            }
            return S3Credentials(
                accessKeyID: "K\(run)", secretAccessKey: "S", sessionToken: "T", expiration: Date().addingTimeInterval(lifetime.withLock { $0 }))
        }
        #expect(try provider.current().accessKeyID == "K1" && provider.current().accessKeyID == "K1")
        #expect(try provider.current(now: Date().addingTimeInterval(3600 - 299)).accessKeyID == "K2", "within five minutes of expiring: fetched again")
        failing.withLock { $0 = true }
        #expect(try provider.current(now: Date().addingTimeInterval(3600 - 100)).accessKeyID == "K2", "still valid: kept while the source fails")
        #expect(throws: HaulError.self) { try provider.current(now: Date().addingTimeInterval(7200)) }
        failing.withLock { $0 = false }
        lifetime.withLock { $0 = 60 }
        provider.invalidate()
        #expect(try provider.current().accessKeyID == "K3" && provider.current().accessKeyID == "K4", "credentials about to expire are asked for each time")
        #expect("\(provider)" == "key K4 from the credential_process of profile 'p'")
    }

    @Test("ExpiredToken and friends: refreshed once and sent again; the error names the code and what to do, never the secret")
    func expiredToken() throws {
        var answer = S3Client.Response()
        answer.status = 400
        answer.body = Data("<Error><Code>ExpiredToken</Code><Message>The provided token has expired.</Message></Error>".utf8)
        #expect(CredentialProvider.tokenRejected(answer, signedWithToken: true))
        var head = S3Client.Response()
        head.status = 400
        #expect(CredentialProvider.tokenRejected(head, signedWithToken: true) && !CredentialProvider.tokenRejected(head, signedWithToken: false))
        let runs = Mutex(0)
        let provider = CredentialProvider(source: .process(command: "c", profile: "p")) {
            runs.withLock { $0 += 1 }
            return S3Credentials(accessKeyID: "K", secretAccessKey: "secret-value", sessionToken: "T")
        }
        var sent = 0
        let final = try provider.signing(replayable: true) { _ in
            sent += 1
            return sent == 1 ? answer : S3Client.Response()
        }
        #expect(final.status == 0 && sent == 2 && runs.withLock { $0 } == 2)
        let config = S3Config(endpoint: "http://h:1", region: "r", credentials: provider)
        let error = S3Failure.error(
            status: 400, code: "ExpiredToken", message: "The provided token has expired.", bucketRegion: nil, doing: "put s3://b/k", bucket: "b", config: config
        )
        #expect(error.code == .s3ExpiredToken && error.isTransient && error.description.contains("ExpiredToken"), "\(error)")
        #expect(!error.description.contains("secret-value"))
        let fixed = S3Config(endpoint: "http://h:1", region: "r", credentials: S3Credentials(accessKeyID: "K", secretAccessKey: "x", sessionToken: "T"))
        let stale = S3Failure.error(status: 403, code: "InvalidToken", message: nil, bucketRegion: nil, doing: "x", bucket: "b", config: fixed)
        #expect(!stale.isTransient && stale.description.contains("InvalidToken") && stale.description.contains("AWS_SESSION_TOKEN"))
    }

    @Test("region and endpoint come from the profile of ~/.aws/config, the environment first")
    func regionAndEndpoint() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("aws-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home + "/.aws", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let text =
            "[profile p]\nregion = ap-south-1\nservices = local\naws_access_key_id = A\naws_secret_access_key = S\n[services local]\ns3 =\n  endpoint_url = http://127.0.0.1:9000\n"
        try text.write(toFile: home + "/.aws/config", atomically: true, encoding: .utf8)
        let fromFile = try S3Config.fromEnvironment(["HOME": home, "AWS_PROFILE": "p"])
        #expect(fromFile.region == "ap-south-1" && fromFile.endpoint == "http://127.0.0.1:9000" && fromFile.pathStyle)
        let fromEnv = try S3Config.fromEnvironment(["HOME": home, "AWS_PROFILE": "p", "AWS_REGION": "us-west-2", "AWS_ENDPOINT_URL": "http://e:1"])
        #expect(fromEnv.region == "us-west-2" && fromEnv.endpoint == "http://e:1")
    }
}
