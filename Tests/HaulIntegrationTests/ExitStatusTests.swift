import Foundation
import HaulTestSupport
import Testing

/// `haul get`'s exit status tells a script what went wrong, as wget's and aria2c's do: each
/// status from the real binary against a real peer, and the code in `--json`.
@Suite("get exit statuses")
struct ExitStatusTests {
    /// `haul get ARGS --retry 0 --json -q` in a folder of its own: the status and the JSON's error code.
    static func get(_ arguments: [String], label: String) throws -> (status: Int32, code: String, stderr: String) {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("exit-\(label)")
        let result = try Run.haul(["get"] + arguments + ["--retry", "0", "--json", "-q"], database: database.url, directory: directory)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
        let first = (object["transfers"] as? [[String: Any]])?.first { $0["state"] as? String != "done" } ?? object
        return (result.status, first["code"] as? String ?? "", result.stderr)
    }

    @Test("404 gives 8, a 401 gives 6, a closed port 4, an untrusted certificate 5, a wrong --checksum 10, a 1 MiB head 7")
    func eachFailureItsStatus() throws {
        let file = try Origin.file("exit/file.bin", size: 100_000)
        let hostile = try HostileOrigin()
        defer { withExtendedLifetime(hostile) {} }
        let cases: [(label: String, arguments: [String], status: Int32, code: String)] = [
            ("not-found", [Harness.origin + "/exit/no-such.bin"], 8, "origin-status"),
            ("auth", [Harness.origin + "/secret" + file.path], 6, "origin-auth"),
            ("network", ["http://127.0.0.1:9/exit.bin"], 4, "connect"),
            ("tls", [Harness.originTLS + file.path], 5, "tls-verify"),
            ("checksum", [Harness.origin + file.path, "--checksum", "sha256:" + String(repeating: "0", count: 64)], 10, "checksum-mismatch"),
            ("malformed", [hostile.base + "/bighead"], 7, "bad-origin"),
        ]
        for (label, arguments, status, code) in cases {
            let result = try Self.get(arguments, label: label)
            #expect(result.status == status && result.code == code, "\(label): exit \(result.status), code \(result.code): \(result.stderr)")
        }
    }

    @Test("several URLs: the first failed one in the order given says the status")
    func firstFailureWins() throws {
        let notFound = Harness.origin + "/exit/missing.bin"
        let closed = "http://127.0.0.1:9/exit-several.bin"
        #expect(try Self.get([closed, notFound, "-o", "out/"], label: "closed-first").status == 4)
        #expect(try Self.get([notFound, closed, "-o", "out/"], label: "missing-first").status == 8)
    }

    @Test("storage without room for the file gives 9")
    func storageFull() throws {
        let file = try Origin.file("exit/big.bin", size: 3 << 20)
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("exit-full")
        let mount = try Mount(tmpfsAt: directory, size: "4m")
        try Data(count: 3 << 20).write(to: URL(fileURLWithPath: directory + "/filler"))
        let result = try Run.haul(
            ["get", Harness.origin + file.path, "-o", directory + "/big.bin", "--retry", "0", "--json", "-q"], database: database.url)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(result.status == 9 && object["code"] as? String == "storage-full", "exit \(result.status): \(result.stdout) \(result.stderr)")
        withExtendedLifetime(mount) {}
    }
}
