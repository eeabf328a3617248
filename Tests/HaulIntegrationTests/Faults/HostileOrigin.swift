import Foundation
import HaulTestSupport
import Testing

/// The hostile origin (`Faults/hostile_origin.py`) on a free port of `address` (any loopback
/// address: 127.0.0.2 stands for a host that is not this one), killed when released.
final class HostileOrigin: @unchecked Sendable {
    // Used by one test on one task at a time.
    private let child: Child
    let address: String
    let port: Int

    /// `http://ADDRESS:PORT`.
    var base: String { "http://\(address):\(port)" }

    init(address: String = "127.0.0.1") throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("hostile_origin.py").path
        let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/python3"
        let child = try Child(python, ["-u", script, address], environment: [:])
        var found = 0
        Harness.waitUntil(timeout: 15) {
            if let line = child.stdout.split(separator: "\n").first, line.hasPrefix("PORT "), let value = Int(line.dropFirst(5)) { found = value }
            return found > 0 || !child.isRunning
        }
        guard found > 0 else {
            child.signal(SIGKILL)
            throw TestFailure("the hostile origin did not start: \(child.stderr)")
        }
        self.child = child
        self.address = address
        self.port = found
    }

    deinit {
        child.signal(SIGKILL)
        _ = child.wait(timeout: 5)
    }

    /// Every request it received (but `/_log`): path and query, and the headers as sent.
    func log() throws -> [(path: String, headers: [String: String])] {
        let result = try Run.program("/usr/bin/curl", ["-sS", "--max-time", "30", base + "/_log"], environment: [:], timeout: 40)
        guard result.status == 0, let entries = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] else {
            throw TestFailure("hostile origin /_log failed (\(result.status)): \(result.stderr)")
        }
        return entries.map { entry in
            let headers = (entry["headers"] as? [String: String] ?? [:]).reduce(into: [String: String]()) { $0[$1.key.lowercased()] = $1.value }
            return (entry["path"] as? String ?? "", headers)
        }
    }
}
