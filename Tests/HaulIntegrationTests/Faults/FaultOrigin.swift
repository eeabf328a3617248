import Foundation
import HaulTestSupport
import Testing

/// The fault-injecting origin (`Faults/origin.py`): one process per test on a free loopback
/// port, killed when the test lets go of it (also when the test fails or throws).
final class FaultOrigin: @unchecked Sendable {
    // Used by one test on one task at a time.
    private let child: Child
    let port: Int

    /// `http://127.0.0.1:PORT`.
    var base: String { "http://127.0.0.1:\(port)" }

    init() throws {
        (child, port) = try ScriptOrigin.start("origin.py", [], what: "fault origin")
    }

    deinit {
        child.signal(SIGKILL)
        _ = child.wait(timeout: 5)
    }

    /// A file the origin serves, as created.
    struct Served {
        let path: String
        let url: String
        /// sha256 and size of each version known up front (version 1 exists when the fault replaces the file).
        let versions: [(sha256: String, size: Int, etag: String)]
        /// sha512 of version 0.
        let sha512: String
        var sha256: String { versions[0].sha256 }
        var size: Int { versions[0].size }
    }

    /// Creates `path` with `size` deterministic bytes and the given faults (see origin.py).
    func create(_ path: String, size: Int, _ faults: [String: Any] = [:]) throws -> Served {
        var query = ["path=\(path)", "size=\(size)"]
        for (key, value) in faults.sorted(by: { $0.key < $1.key }) { query.append("\(key)=\(value)") }
        let object = try get("/_create?" + query.joined(separator: "&"))
        let versions = (object["versions"] as? [[String: Any]] ?? []).map {
            (sha256: $0["sha256"] as? String ?? "", size: $0["size"] as? Int ?? -1, etag: $0["etag"] as? String ?? "")
        }
        let sha512 = (object["versions"] as? [[String: Any]])?.first?["sha512"] as? String ?? ""
        return Served(path: path, url: base + path, versions: versions, sha512: sha512)
    }

    /// One request the origin answered, as it logged it.
    struct Request {
        let number: Int
        let range: String?
        let ifRange: String?
        /// First and last byte of the body it sent (or began to send), when it sent one.
        let start: Int64?
        let end: Int64?
        let status: Int
        let length: Int64
        let sent: Int64
        let version: Int
        let fault: String?
        let time: Double
        let finished: Double?
    }

    struct Stats {
        let count: Int
        let requests: [Request]
        let versions: [(sha256: String, size: Int, etag: String)]
        var bodyBytesSent: Int64 { requests.reduce(0) { $0 + $1.sent } }
    }

    /// The origin's request log for `path`.
    func stats(_ path: String) throws -> Stats {
        let object = try get("/_stats?path=\(path)")
        let requests = (object["requests"] as? [[String: Any]] ?? []).map { entry in
            Request(
                number: entry["n"] as? Int ?? 0, range: entry["range"] as? String, ifRange: entry["if_range"] as? String,
                start: (entry["start"] as? Int).map(Int64.init), end: (entry["end"] as? Int).map(Int64.init),
                status: entry["status"] as? Int ?? 0, length: Int64(entry["length"] as? Int ?? 0), sent: Int64(entry["sent"] as? Int ?? 0),
                version: entry["version"] as? Int ?? 0, fault: entry["fault"] as? String, time: entry["time"] as? Double ?? 0,
                finished: entry["finished"] as? Double)
        }
        let versions = (object["versions"] as? [[String: Any]] ?? []).map {
            (sha256: $0["sha256"] as? String ?? "", size: $0["size"] as? Int ?? -1, etag: $0["etag"] as? String ?? "")
        }
        return Stats(count: object["count"] as? Int ?? 0, requests: requests, versions: versions)
    }

    /// Switches every fault of `path` off (its rate limit stays).
    func heal(_ path: String) throws {
        _ = try get("/_heal?path=\(path)")
    }

    private func get(_ pathAndQuery: String) throws -> [String: Any] {
        let result = try Run.program("/usr/bin/curl", ["-sS", "--max-time", "30", base + pathAndQuery], environment: [:], timeout: 40)
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("fault origin \(pathAndQuery) failed (\(result.status)): \(result.stderr) \(result.stdout)")
        }
        return object
    }
}
