import Foundation
import HaulTestSupport
import Testing

/// Secrets kept out of the command line: `--header @FILE` and `--netrc` / `--netrc-file`, with
/// the real `haul` binary against an origin whose `/auth/` files need a login.
@Suite("security: secrets off the command line")
struct CommandLineSecretsTests {
    static let bearer = "Authorization: Bearer s3cr3t-bearer-token"
    /// `netrc-user:netrc-pass`, which the origin accepts.
    static let basic = "Basic bmV0cmMtdXNlcjpuZXRyYy1wYXNz"

    /// Writes `text` to `directory/name` with mode 0600; its path.
    static func secretFile(_ directory: String, _ name: String, _ text: String) throws -> String {
        let path = directory + "/" + name
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
        return path
    }

    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    }

    @Test("haul get --header @FILE: the origin gets the headers, and the running process's command line holds no secret")
    func headerFile() throws {
        let origin = try HostileOrigin()
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("header-file")
        let file = try Self.secretFile(directory, "headers.txt", "# for the origin\n\n\(Self.bearer)\r\nX-Trace: from-file\n")
        // Paced, so that the process is still running when its command line is read.
        let child = try Child(
            Harness.haulBinary,
            ["get", "-q", origin.base + "/auth/big.bin?size=3000000", "-o", directory + "/out/", "--header", "@" + file, "--limit-rate", "1M"],
            environment: ["DATABASE_URL": database.url])
        let started = Harness.waitUntil(timeout: 30) { (try? origin.log().contains { $0.path.hasPrefix("/auth/") }) == true || !child.isRunning }
        let commandLine = FileManager.default.contents(atPath: "/proc/\(child.pid)/cmdline").map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(started && child.isRunning, "the get was not running: \(child.stderr)")
        #expect(commandLine.contains("@" + file), "the command line read is the get's: \(commandLine)")
        #expect(!commandLine.contains("s3cr3t"), "the secret is in /proc/\(child.pid)/cmdline")
        #expect(child.wait(timeout: 120), "the get did not finish")
        #expect(child.exitStatus == 0, "\(child.stderr)")
        #expect(Self.size(directory + "/out/big.bin") == 3_000_000)
        let requests = try origin.log()
        #expect(!requests.isEmpty)
        for request in requests {
            #expect(request.headers["authorization"] == "Bearer s3cr3t-bearer-token" && request.headers["x-trace"] == "from-file", "\(request.path)")
        }
    }

    @Test("--netrc-file, --netrc with NETRC or HOME: the login goes to its machine only, never to a redirect's other host")
    func netrc() throws {
        let origin = try HostileOrigin(address: "127.0.0.1")
        let other = try HostileOrigin(address: "127.0.0.2")
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("netrc")
        let netrc = try Self.secretFile(
            directory, ".netrc",
            """
            # haul's test origin
            machine 127.0.0.1
                login netrc-user
                password netrc-pass

            macdef init
            password wrong

            default login default-user password default-pass

            """)
        let url = origin.base + "/auth/n.bin?size=200000"
        let runs: [([String], [String: String])] = [
            (["--netrc-file", netrc], [:]), (["--netrc"], ["NETRC": netrc]), (["--netrc"], ["HOME": directory, "NETRC": ""]),
        ]
        for (index, (flags, environment)) in runs.enumerated() {
            let output = directory + "/out\(index).bin"
            let result = try Run.haul(["get", "-q", url, "-o", output] + flags, database: database.url, environment: environment)
            #expect(result.status == 0 && Self.size(output) == 200_000, "\(flags) \(environment): \(result.stderr)")
        }
        #expect(try origin.log().allSatisfy { $0.headers["authorization"] == Self.basic })
        // A URL naming the user but not the password gets that user's password, as curl gives it.
        let named = try Run.haul(
            ["get", "-q", "http://netrc-user@127.0.0.1:\(origin.port)/auth/u.bin?size=1000", "-o", directory + "/named.bin", "--netrc-file", netrc],
            database: database.url)
        #expect(named.status == 0 && Self.size(directory + "/named.bin") == 1000, "\(named.stderr)")
        // curl reads a netrc others can read too; haul warns.
        let shared = try Self.secretFile(directory, "shared-netrc", "machine 127.0.0.1 login netrc-user password netrc-pass\n")
        chmod(shared, 0o644)
        let warned = try Run.haul(["get", "-q", url, "-o", directory + "/shared.bin", "--netrc-file", shared], database: database.url)
        #expect(warned.status == 0 && warned.stderr.contains("can be read by other users"), "\(warned.stderr)")

        let away = origin.base + "/redirect?to=" + other.base + "/file/away.bin?size=1000"
        let redirected = try Run.haul(["get", "-q", away, "-o", directory + "/away.bin", "--netrc-file", netrc], database: database.url)
        #expect(redirected.status == 0 && Self.size(directory + "/away.bin") == 1000, "\(redirected.stderr)")
        let received = try other.log()
        #expect(!received.isEmpty && received.allSatisfy { $0.headers["authorization"] == nil }, "the netrc's login reached 127.0.0.2")
        #expect(try origin.log().contains { $0.path.hasPrefix("/redirect") && $0.headers["authorization"] == Self.basic })

        let without = try Run.haul(["get", "-q", url, "-o", directory + "/without.bin"], database: database.url)
        #expect(without.status == 6 && Self.size(directory + "/without.bin") == nil, "the origin needs the login: \(without.stderr)")
    }

    @Test("a header file or netrc that cannot be read, or a line that is no header, is one line, exit 2, nothing written")
    func badFiles() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("bad-secrets")
        let malformed = try Self.secretFile(directory, "bad.txt", "X-Ok: 1\ns3cr3t-token-without-a-name\n")
        let cases: [([String], String)] = [
            (["--header", "@" + directory + "/missing.txt"], "cannot read --header @"),
            (["--header", "@" + malformed], "line 2 is not a header"),
            (["--netrc-file", directory + "/missing-netrc"], "cannot read the netrc file"),
        ]
        for (flags, message) in cases {
            let output = directory + "/out/"
            let result = try Run.haul(["get", "http://127.0.0.1:9/a.bin", "-o", output] + flags, database: database.url)
            #expect(result.status == 2, "\(flags): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(message), "\(flags): \(result.stderr)")
            #expect(!result.stderr.contains("s3cr3t"), "the line's text is not shown")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: output))?.isEmpty ?? true)
        }
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "0")
    }

    @Test("haul enqueue reads the header file and the netrc when it runs and records them as it records --header")
    func enqueue() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("enqueue-secrets")
        let headers = try Self.secretFile(directory, "headers.txt", "X-Api-Key: s3cr3t-key\n")
        let netrc = try Self.secretFile(directory, "netrc", "machine 127.0.0.1 login netrc-user password netrc-pass\n")
        let result = try Run.haul(
            ["enqueue", "http://127.0.0.1:9/a.bin", "--dest", "a.bin", "--header", "@" + headers, "--netrc-file", netrc, "--json"], database: database.url)
        #expect(result.status == 0, "\(result.stderr)")
        let stored = try database.scalar("SELECT headers FROM transfers WHERE dest = 'a.bin'")
        #expect(stored.contains("s3cr3t-key") && stored.contains(Self.basic), "\(stored)")

        let manifest = try Self.secretFile(directory, "manifest.txt", "http://127.0.0.1:9/b.bin b.bin\nhttp://127.0.0.3:9/c.bin c.bin\n")
        let batch = try Run.haul(["enqueue", "--manifest", manifest, "--batch", "nightly", "--netrc-file", netrc], database: database.url)
        #expect(batch.status == 0, "\(batch.stderr)")
        #expect(try database.scalar("SELECT headers FROM transfers WHERE dest = 'b.bin'").contains(Self.basic))
        #expect(!(try database.scalar("SELECT headers FROM transfers WHERE dest = 'c.bin'").contains("Basic")), "another host's line has no login")
    }

    @Test("haul upload --header @FILE sends the file's headers")
    func uploadHeaderFile() throws {
        let origin = try HostileOrigin()
        let directory = Harness.temporaryDirectory("upload-header-file")
        let headers = try Self.secretFile(directory, "headers.txt", "\(Self.bearer)\n")
        let payload = try Self.secretFile(directory, "payload.txt", "hello\n")
        let result = try Run.haul(["upload", payload, origin.base + "/upload", "--header", "@" + headers], database: nil)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try origin.log().contains { $0.path == "/upload" && $0.headers["authorization"] == "Bearer s3cr3t-bearer-token" })
    }

    @Test("haul upload --netrc-file and --netrc log in to the upload server with its host's entry")
    func uploadNetrc() throws {
        let origin = try HostileOrigin()
        let directory = Harness.temporaryDirectory("upload-netrc")
        let netrc = try Self.secretFile(directory, "netrc", "machine 127.0.0.1 login netrc-user password netrc-pass\n")
        let payload = try Self.secretFile(directory, "payload.txt", "hello\n")
        for (flags, environment) in [(["--netrc-file", netrc], [String: String]()), (["--netrc"], ["NETRC": netrc])] {
            let result = try Run.haul(["upload", payload, origin.base + "/upload?by=\(flags[0])"] + flags, database: nil, environment: environment)
            #expect(result.status == 0, "\(flags): \(result.stderr)")
            #expect(try origin.log().contains { $0.path == "/upload?by=\(flags[0])" && $0.headers["authorization"] == Self.basic }, "\(flags)")
        }
    }
}
