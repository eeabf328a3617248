import Foundation
import HaulTestSupport
import Testing

/// What a peer says reaches a terminal, a log or JSON only made safe: a hostile origin or
/// upload server drives no terminal.
@Suite("security: peer text")
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
        #expect(get.status == 1)
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
            #expect(upload.stderr.contains("403 Not") && upload.stderr.contains("refused: Not"), "the status and the server's message are shown: \(upload.stderr)")
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
}
