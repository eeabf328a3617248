import Foundation
import HaulTestSupport

extension Run {
    /// Runs `haul ARGS` to completion with `DATABASE_URL` set (unless `database` is nil).
    static func haul(_ arguments: [String], database: String?, environment: [String: String] = [:], directory: String? = nil, timeout: Double = 120) throws -> Result {
        var env = environment
        if let database { env["DATABASE_URL"] = database }
        return try program(Harness.haulBinary, arguments, environment: env, directory: directory, timeout: timeout)
    }

    /// Runs SQL through psql, unaligned and tuples-only.
    static func psql(_ url: String, _ sql: String) throws -> Result {
        try program("/usr/bin/psql", ["-X", "-tA", "-v", "ON_ERROR_STOP=1", url, "-c", sql], environment: [:])
    }
}
