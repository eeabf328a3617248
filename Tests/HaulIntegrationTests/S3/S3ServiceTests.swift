import Foundation
import HaulTestSupport
import Testing

/// What a user meets from the S3 service itself: a store that says to slow down, a bucket in
/// another region, credentials from a profile file.
@Suite("S3 storage: the service's answers")
struct S3ServiceTests {
    @Test("a PutObject answered 503 SlowDown is retried with backoff and the object is stored")
    func slowDownRetried() throws {
        try withFlakyS3 { port, environment in
            let database = try TestDatabase()
            let file = try Origin.file("s3/slowdown-\(UUID().uuidString.prefix(6)).bin", size: 200_003)
            let result = try Run.haul(["get", Harness.origin + file.path, "-o", "s3://busy/k.bin"], database: database.url, environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            let log = try Run.program("/usr/bin/curl", ["-sS", "http://127.0.0.1:\(port)/_log"], environment: [:])
            let requests = (try JSONSerialization.jsonObject(with: Data(log.stdout.utf8)) as? [String]) ?? []
            #expect(requests.filter { $0 == "PUT /busy/k.bin" }.count == 2, "one SlowDown, then stored: \(requests)")
            let stored = try Run.program(
                "/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{size_download}", "http://127.0.0.1:\(port)/busy/k.bin"], environment: [:])
            #expect(stored.stdout == "200003", "\(stored.stdout) \(stored.stderr)")
        }
    }

    @Test("a bucket in another region is explained, with the setting that fixes it")
    func otherRegion() throws {
        try withFlakyS3 { _, environment in
            let database = try TestDatabase()
            let result = try Run.haul(["get", Harness.origin + "/nothing.bin", "-o", "s3://elsewhere/k.bin"], database: database.url, environment: environment)
            #expect(result.status != 0)
            #expect(result.stderr.contains("region eu-west-1") && result.stderr.contains("AWS_REGION=eu-west-1"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        }
    }

    @Test("credentials come from a profile of ~/.aws/credentials when the environment has none")
    func profileCredentials() throws {
        let bucket = try S3Bucket("profile")
        let database = try TestDatabase()
        let home = Harness.temporaryDirectory("aws-home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/.aws", withIntermediateDirectories: true)
        let profile =
            "[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n[haul]\n"
            + "aws_access_key_id = \(Harness.required("HAUL_TEST_S3_KEY"))\naws_secret_access_key = \(Harness.required("HAUL_TEST_S3_SECRET"))\n"
        try profile.write(toFile: home + "/.aws/credentials", atomically: true, encoding: .utf8)
        let file = try Origin.file("s3/profile-\(UUID().uuidString.prefix(6)).bin", size: 10_007)
        let environment = [
            "HOME": home, "AWS_PROFILE": "haul", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": "",
            "AWS_ENDPOINT_URL": Harness.required("HAUL_TEST_S3_ENDPOINT"), "AWS_REGION": "us-east-1",
        ]
        let result = try Run.haul(["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/p.bin"], database: database.url, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try bucket.object("p.bin")?.sha256 == file.sha256)
    }

    /// Runs `body` with a flaky S3 fake (`Faults/flaky_s3.py`) and the S3 environment pointed at it.
    private func withFlakyS3(_ body: (_ port: Int, _ environment: [String: String]) throws -> Void) throws {
        let (fake, port) = try ScriptOrigin.start("flaky_s3.py", what: "flaky S3")
        defer {
            fake.signal(SIGKILL)
            _ = fake.wait(timeout: 5)
        }
        var environment = S3Bucket.environment
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(port)"
        try body(port, environment)
    }
}
