import Foundation
import HaulTestSupport
import Testing

/// What operators' scripts rely on: exit statuses, refusals that write nothing, help, secrets.
@Suite("command line")
struct CommandLineTests {
    static let badEnqueues: [[String]] = [
        ["not a url", "--dest", "x"],
        ["file:///etc/passwd", "--dest", "x"],
        ["ftp://h/x", "--dest", "x"],
        ["gopher://h/x", "--dest", "x"],
        ["http:///nohost", "--dest", "x"],
        ["http://h/x", "--dest", "/abs/x"],
        ["http://h/x", "--dest", "../escape"],
        ["http://h/x", "--dest", "a/../../escape"],
        ["http://h/x", "--dest", "x", "--segment-size", "lots"],
        ["http://h/x", "--dest", "x", "--segment-size", "0"],
        ["http://h/x", "--dest", "x", "--segment-size", "-5"],
        ["http://h/x", "--dest", "x", "--checksum", "crc32:abcd"],
        ["http://h/x", "--dest", "x", "--checksum", "sha256:abc"],
        ["http://h/x", "--dest", "x", "--checksum", "sha256:" + String(repeating: "z", count: 64)],
        ["http://h/x", "--dest", "x", "--layout", "sideways"],
        ["http://h/x", "--dest", "x", "--header", "no colon here"],
        ["http://h/x", "--dest", "x", "--bogus-flag"],
    ]

    @Test("bad input is refused with exit status 2, a clear message, and no row", arguments: badEnqueues)
    func refusedEnqueue(arguments: [String]) throws {
        let database = try TestDatabase()
        let result = try Run.haul(["enqueue"] + arguments, database: database.url)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix("haul: "), "one clear line: \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"))
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "0")
    }

    @Test(
        "a negative number where a number goes is judged as that number, not taken for an unknown option",
        arguments: [
            (["host-limit", "set", "mirror.example", "-1"], "the limit '-1' is not a whole number of 0 or more"),
            (["cancel", "-5"], "'-5' is not a transfer id"),
            (["status", "-1"], "'-1' is not a transfer id"),
        ])
    func negativeNumbers(arguments: [String], says: String) throws {
        let database = try TestDatabase()
        let result = try Run.haul(arguments, database: database.url)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(says) && !result.stderr.contains("unknown option"), "\(result.stderr)")
        #expect(try database.scalar("SELECT count(*) FROM origin_hosts WHERE max_running IS NOT NULL AND host <> '*'") == "0")
    }

    @Test("an unreachable database names where it was tried and what to set")
    func unreachableDatabase() throws {
        let result = try Run.haul(["list"], database: "postgresql://haul@127.0.0.1:1/nowhere")
        #expect(result.status == 1)
        #expect(result.stderr.contains("127.0.0.1:1") && result.stderr.contains("DATABASE_URL"), "\(result.stderr)")
    }

    @Test("every command has complete help that exits 0")
    func help() throws {
        let overview = try Run.haul(["--help"], database: nil)
        #expect(overview.status == 0)
        for command in ["get", "enqueue", "worker", "status", "list", "cancel", "retry", "pause", "resume", "migrate"] {
            #expect(overview.stdout.contains(command))
            let result = try Run.haul([command, "--help"], database: nil)
            #expect(result.status == 0 && result.stdout.contains("usage: haul \(command)"), "\(command)")
        }
    }

    @Test("secrets in URLs and headers never appear in status, list or logs")
    func secretsRedacted() throws {
        let cluster = try Cluster("secrets")
        let file = try Origin.file("cli/secret.bin", size: 10_000)
        let url = Harness.origin.replacingOccurrences(of: "http://", with: "http://user:hunter2@") + "/secret" + file.path
        let id = try cluster.enqueue(url, ["--dest", "s.bin", "--header", "Authorization: Bearer test-token", "--header", "Cookie: session=topsecret"])
        let worker = try cluster.startWorker(["--verbose"])
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(cluster.sha256("s.bin") == file.sha256, "the Authorization header reached the origin")
        let outputs = [
            try cluster.haul(["status", String(id)]).stdout, try cluster.haul(["status", String(id), "--json"]).stdout,
            try cluster.haul(["list"]).stdout, try cluster.haul(["list", "--json"]).stdout, worker.stderr,
        ]
        for output in outputs {
            #expect(!output.contains("hunter2") && !output.contains("test-token") && !output.contains("topsecret"), "\(output)")
        }
    }
}
