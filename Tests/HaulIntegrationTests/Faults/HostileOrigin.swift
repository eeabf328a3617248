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
        (child, port) = try ScriptOrigin.start("hostile_origin.py", [address], what: "hostile origin")
        self.address = address
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
