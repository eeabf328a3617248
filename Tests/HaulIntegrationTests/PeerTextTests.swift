import Foundation
import HaulTestSupport
import Testing

/// What a peer says and what a URL carries reach a terminal, a log or JSON only made safe: a
/// hostile origin, upload server or S3 drives no terminal, and no secret of a URL is shown.
@Suite("security: peer text and secrets in URLs")
struct PeerTextTests {
    /// The scalars that must never reach a terminal raw: C0 controls but line feed and tab,
    /// DEL, C1 controls, bidi embeddings, overrides, isolates and marks.
    static func isRawControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return false
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
        default: return false
        }
    }

    /// Records an issue naming `what` when `text` holds a raw control, escape or bidi scalar.
    static func expectInert(_ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let raw = text.unicodeScalars.filter(isRawControl).map { String(format: "U+%04X", $0.value) }
        #expect(raw.isEmpty, "\(what) holds \(Set(raw).sorted()): \(text.debugDescription)", sourceLocation: sourceLocation)
    }

    /// Every string inside a JSON document, decoded (as `jq -r` would print them).
    static func strings(inJSON text: String) throws -> [String] {
        func collect(_ value: Any) -> [String] {
            switch value {
            case let string as String: [string]
            case let array as [Any]: array.flatMap(collect)
            case let object as [String: Any]: object.values.flatMap(collect)
            default: []
            }
        }
        return collect(try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]))
    }

    /// The id in `haul get --json`'s output.
    static func id(ofGet output: String) throws -> String {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "get --json printed \(output)")
        return String(describing: try #require(object["id"]))
    }

    @Test("an origin's reason phrase with ESC]52, ESC[2J, U+009B and U+202E drives no terminal: get, status, list, dashboard")
    func hostileReasonPhrase() throws {
        let origin = try HostileOrigin()
        let served = try DashboardTests.Served("peer-text", token: nil)
        let database = served.cluster.database.url
        let work = Harness.temporaryDirectory("peer-text")
        defer { try? FileManager.default.removeItem(atPath: work) }

        let get = try Run.haul(["get", origin.base + "/hostile", "-o", work + "/", "--json", "-v"], database: database, directory: work)
        #expect(get.status == 8)
        #expect(get.stderr.contains("origin answered 404 Not"), "the reason is shown, made safe: \(get.stderr)")
        Self.expectInert(get.stderr, "haul get's standard error")
        Self.expectInert(get.stdout, "haul get --json")
        for value in try Self.strings(inJSON: get.stdout) { Self.expectInert(value, "a string of haul get --json") }
        let id = try Self.id(ofGet: get.stdout)

        for arguments in [["status", id], ["list"], ["status", id, "--json"], ["list", "--json"], ["list", "--state", "failed"]] {
            let shown = try Run.haul(arguments, database: database)
            #expect(shown.status == 0, "\(arguments): \(shown.stderr)")
            #expect(shown.stdout.contains("404 Not"), "\(arguments) shows the failure: \(shown.stdout)")
            Self.expectInert(shown.stdout + shown.stderr, "haul \(arguments.joined(separator: " "))")
            if arguments.contains("--json") {
                for value in try Self.strings(inJSON: shown.stdout) { Self.expectInert(value, "a string of haul \(arguments.joined(separator: " "))") }
            }
        }
        for path in ["/", "/transfers", "/transfers/\(id)", "/api/transfers", "/api/transfers/\(id)"] {
            let page = try served.request("GET", path)
            #expect(page.status == 200, "\(path)")
            Self.expectInert(page.body, "the dashboard's \(path)")
            if path.hasPrefix("/api") {
                #expect(page.body.contains("404 Not"), "\(path) shows the failure")
                for value in try Self.strings(inJSON: page.body) { Self.expectInert(value, "a string of \(path)") }
            }
        }
    }

    @Test("an upload server's reason phrase and error body with escapes are shown made safe by haul upload")
    func hostileUploadServer() throws {
        let origin = try HostileOrigin()
        let work = Harness.temporaryDirectory("peer-upload")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = work + "/report.bin"
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: file))
        for protocolName in ["multipart", "tus"] {
            let upload = try Run.haul(["upload", file, origin.base + "/hostile?code=403", "--protocol", protocolName], database: nil)
            #expect(upload.status == 1, "\(protocolName): \(upload.stderr)")
            #expect(
                upload.stderr.contains("403 Not") && upload.stderr.contains("refused: Not"), "the status and the server's message are shown: \(upload.stderr)")
            Self.expectInert(upload.stdout + upload.stderr, "haul upload --protocol \(protocolName)")
        }
    }

    @Test("an S3 error message with escapes is shown made safe by haul get and haul status")
    func hostileS3Message() throws {
        let (fake, port) = try ScriptOrigin.start("flaky_s3.py", what: "hostile S3")
        defer {
            fake.signal(SIGKILL)
            _ = fake.wait(timeout: 5)
        }
        var environment = S3Bucket.environment
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(port)"
        let database = try TestDatabase()
        let file = try Origin.file("security/s3-hostile.bin", size: 10_000)
        let get = try Run.haul(["get", Harness.origin + file.path, "-o", "s3://hostile/k.bin", "--json"], database: database.url, environment: environment)
        #expect(get.status == 1)
        #expect(get.stderr.contains("InvalidArgument: Not"), "S3's message is shown, made safe: \(get.stderr)")
        Self.expectInert(get.stdout + get.stderr, "haul get to a hostile S3")
        let status = try Run.haul(["status", try Self.id(ofGet: get.stdout), "--json"], database: database.url)
        #expect(status.stdout.contains("InvalidArgument: Not"), "\(status.stdout)")
        for value in try Self.strings(inJSON: status.stdout) { Self.expectInert(value, "a string of haul status --json") }
    }

    /// A query parameter of each kind a signed URL or an API puts its secret in, none of which
    /// is on a list: the value is hidden because the name says what it is.
    static let secretParameters = [
        "access-token", "auth_token", "api-key", "refresh_token", "id_token", "passwd", "pwd", "jwt", "session", "auth", "access_key",
        "Policy", "Key-Pair-Id", "sv-sig", "X-Amz-Security-Token", "client_secret", "Credential",
    ]

    @Test("no secret of a URL's query is shown by get, its worker's log, status, list, --json or the dashboard")
    func secretsInURLs() throws {
        let origin = try HostileOrigin()
        let served = try DashboardTests.Served("url-secrets", token: nil)
        let database = served.cluster.database.url
        let work = Harness.temporaryDirectory("url-secrets")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let secrets = Self.secretParameters.indices.map { "S3CR3T\($0)x" }
        let query = zip(Self.secretParameters, secrets).map { "\($0)=\($1)" }.joined(separator: "&")
        let url = origin.base + "/hostile?code=404&page=2&" + query

        // -v: the in-process worker's log lines too.
        let get = try Run.haul(["get", url, "-o", work + "/", "--json", "-v"], database: database, directory: work)
        #expect(get.status == 8)
        #expect(get.stderr.contains("/hostile?code=404&page=2&access-token=***"), "the URL is shown, its secrets hidden: \(get.stderr)")
        let id = try Self.id(ofGet: get.stdout)
        var outputs = [("haul get", get.stdout + get.stderr)]
        for arguments in [["status", id], ["list"], ["status", id, "--json"], ["list", "--json"]] {
            let shown = try Run.haul(arguments, database: database)
            #expect(shown.status == 0, "\(arguments): \(shown.stderr)")
            #expect(shown.stdout.contains("page=2&access-token=***&auth_token=***"), "\(arguments) shows the URL: \(shown.stdout)")
            outputs.append(("haul \(arguments.joined(separator: " "))", shown.stdout + shown.stderr))
        }
        outputs += try Self.dashboardPages(served, id, "read-only")

        // The operator's dashboard (logged in) shows the same redacted URL.
        let operated = try DashboardTests.Served("url-secrets-op")
        let operatorGet = try Run.haul(["get", url, "-o", work + "/op/", "--json"], database: operated.cluster.database.url, directory: work)
        #expect(operatorGet.status == 8)
        _ = try operated.logIn()
        outputs += try Self.dashboardPages(operated, try Self.id(ofGet: operatorGet.stdout), "operator")

        for (what, text) in outputs where what.hasPrefix("the") && what.hasSuffix("/api/transfers") {
            #expect(text.contains("Key-Pair-Id=***&sv-sig=***"), "\(what) shows the URL: \(text)")
        }
        for (what, text) in outputs {
            for (name, secret) in zip(Self.secretParameters, secrets) {
                #expect(!text.contains(secret), "\(what) shows the value of \(name): \(text)")
            }
        }
    }

    /// The dashboard's pages and API answers about transfer `id`, named for messages.
    static func dashboardPages(_ served: DashboardTests.Served, _ id: String, _ kind: String) throws -> [(String, String)] {
        try ["/", "/transfers", "/transfers/\(id)", "/api/transfers", "/api/transfers/\(id)"].map { path in
            let page = try served.request("GET", path)
            #expect(page.status == 200, "\(kind) \(path)")
            return ("the \(kind) dashboard's \(path)", page.body)
        }
    }
}
