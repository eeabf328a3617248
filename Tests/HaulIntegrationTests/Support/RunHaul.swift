import Foundation
import HaulTestSupport
import Testing

extension Run {
    /// Runs `haul ARGS` to completion with `DATABASE_URL` set (unless `database` is nil).
    static func haul(_ arguments: [String], database: String?, environment: [String: String] = [:], directory: String? = nil, timeout: Double = 120) throws
        -> Result
    {
        var env = environment
        if let database { env["DATABASE_URL"] = database }
        return try program(Harness.haulBinary, arguments, environment: env, directory: directory, timeout: timeout)
    }

    /// Runs SQL through psql, unaligned and tuples-only.
    static func psql(_ url: String, _ sql: String) throws -> Result {
        try program("/usr/bin/psql", ["-X", "-tA", "-v", "ON_ERROR_STOP=1", url, "-c", sql], environment: [:])
    }
}

extension Run {
    /// Starts `haul ARGS` (a paced `haul get` of `path` on the origin) on `database`, waits until
    /// it finished a segment, and interrupts it (Ctrl-C): a get stopped mid-download.
    static func haulInterruptedAfterASegment(_ arguments: [String], of path: String, database: TestDatabase) throws {
        let child = try Child(Harness.haulBinary, arguments, environment: ["DATABASE_URL": database.url])
        let segmentDone = Harness.waitUntil(timeout: 20) {
            let done = try? database.scalar(
                "SELECT count(*) FROM segments s JOIN transfers t ON t.id = s.transfer_id WHERE t.url LIKE '%\(path)' AND s.state = 'done'")
            return (done ?? "0") != "0"
        }
        child.signal(SIGINT)
        try #require(child.wait(timeout: 20), "the interrupted get did not exit")
        try #require(segmentDone, "the get finished no segment: \(child.stderr)")
    }
}
