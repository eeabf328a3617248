import Foundation
import HaulTestSupport
import Testing

/// A test's small Haul cluster: its own database, storage root, and `haul worker` processes.
final class Cluster: @unchecked Sendable {
    // Used by one test on one task at a time.
    let database: TestDatabase
    let storage: String
    private(set) var workers: [Child] = []

    init(_ label: String) throws {
        database = try TestDatabase()
        storage = Harness.temporaryDirectory(label)
    }

    /// `haul ARGS` against this cluster's database.
    func haul(_ arguments: [String], environment: [String: String] = [:]) throws -> Run.Result {
        try Run.haul(arguments, database: database.url, environment: environment)
    }

    /// Enqueues `url` and returns the new transfer's id.
    func enqueue(_ url: String, _ extra: [String] = []) throws -> Int64 {
        let result = try haul(["enqueue", url, "--json"] + extra)
        guard result.status == 0, let data = result.stdout.data(using: .utf8),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let id = object["id"] as? Int64 ?? (object["id"] as? Int).map(Int64.init)
        else { throw TestFailure("enqueue failed (\(result.status)): \(result.stderr)") }
        return id
    }

    /// Starts a `haul worker` process on this cluster's storage (or on `storage`, e.g. `s3://…`).
    @discardableResult
    func startWorker(_ extra: [String] = [], environment: [String: String] = [:], storage: String? = nil) throws -> Child {
        var env = environment
        env["DATABASE_URL"] = database.url
        let child = try Child(Harness.haulBinary, ["worker", "--storage", storage ?? self.storage, "--poll-interval", "200ms"] + extra, environment: env)
        workers.append(child)
        return child
    }

    /// `haul status ID --json` as a dictionary.
    func status(_ id: Int64) throws -> [String: Any] {
        let result = try haul(["status", String(id), "--json"])
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("status \(id) failed: \(result.stderr)")
        }
        return object
    }

    /// The transfer's state, read from the database directly (cheap enough to poll).
    func state(_ id: Int64) throws -> String {
        try database.scalar("SELECT state FROM transfers WHERE id = \(id)")
    }

    /// Waits until every transfer is done, failed or canceled; returns their states.
    @discardableResult
    func waitFinal(_ ids: [Int64], timeout: Double = 60) throws -> [String] {
        let final: Set<String> = ["done", "failed", "canceled"]
        try Harness.waitUntil(timeout: timeout) { try ids.allSatisfy { final.contains(try state($0)) } }
        return try ids.map { try state($0) }
    }

    /// The sha256 of a file under the storage root.
    func sha256(_ relative: String) -> String? {
        Origin.sha256(file: storage + "/" + relative)
    }

    /// Stops every worker gracefully.
    func stopWorkers() {
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers { _ = worker.wait(timeout: 15) }
    }

    deinit {
        stopWorkers()
        try? FileManager.default.removeItem(atPath: storage)
        _ = try? Run.psql(Harness.databaseServer, "DROP DATABASE IF EXISTS \(database.name) WITH (FORCE)")
    }
}
