import Foundation
import HaulTestSupport
import Testing

/// The command-line contract that operators' scripts rely on, clause by clause: help that exits 0,
/// an idempotent `migrate`, `enqueue --json` and `status --json` with stable fields, and refusals
/// that exit 2 and write no row.
@Suite("command contract")
struct CommandContractTests {
    /// Parses a command's standard output as one JSON object.
    private func object(_ result: Run.Result) throws -> [String: Any] {
        let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(parsed as? [String: Any], "not a JSON object: \(result.stdout)")
    }

    @Test("`haul --help` and each scripted command's `--help` exit 0")
    func help() throws {
        #expect(try Run.haul(["--help"], database: nil).status == 0)
        for command in ["migrate", "enqueue", "worker", "status", "list", "get"] {
            let result = try Run.haul([command, "--help"], database: nil)
            #expect(result.status == 0, "haul \(command) --help: \(result.stderr)")
        }
    }

    @Test("`haul migrate` on an empty database, then again, succeeds both times")
    func migrateTwice() throws {
        let database = try TestDatabase(migrated: false)
        for run in 1...2 {
            let result = try Run.haul(["migrate"], database: database.url)
            #expect(result.status == 0, "migrate run \(run): \(result.stderr)")
        }
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "0")
    }

    @Test("`enqueue --json` prints the id; `status ID --json` has the documented fields; a new transfer is pending")
    func enqueueAndStatus() throws {
        let database = try TestDatabase()
        let enqueued = try Run.haul(
            ["enqueue", "http://127.0.0.1:9/contract.bin", "--dest", "contract/c.bin", "--segment-size", "8MiB", "--json"], database: database.url)
        #expect(enqueued.status == 0, "\(enqueued.stderr)")
        let id = try #require(try object(enqueued)["id"] as? Int, "enqueue --json prints {\"id\": …}: \(enqueued.stdout)")

        let status = try object(try Run.haul(["status", String(id), "--json"], database: database.url))
        for field in ["id", "state", "size", "bytes_done", "error", "dest"] {
            #expect(status.keys.contains(field), "status --json lacks \"\(field)\": \(status)")
        }
        #expect(status["state"] as? String == "pending")
        #expect(status["dest"] as? String == "contract/c.bin")

        let list = try Run.haul(["list", "--json"], database: database.url)
        #expect(list.status == 0, "\(list.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]], "list --json is an array: \(list.stdout)")
        #expect(rows.contains { $0["id"] as? Int == id })
    }

    @Test("refused enqueues exit 2 and write no row")
    func refusals() throws {
        let database = try TestDatabase()
        let refused: [[String]] = [
            ["not a url", "--dest", "x"],
            ["file:///etc/passwd", "--dest", "x"],
            ["ftp://h/x", "--dest", "x"],
            ["http://h/x", "--dest", "../escape"],
            ["http://h/x", "--dest", "x", "--segment-size", "lots"],
        ]
        for arguments in refused {
            let result = try Run.haul(["enqueue"] + arguments, database: database.url)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
        }
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "0")
    }
}
