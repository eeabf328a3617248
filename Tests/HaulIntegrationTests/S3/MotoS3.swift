import Foundation
import HaulTestSupport

/// moto's S3 server (`S3/moto_s3.py`), a second S3 store that answers as AWS does, for one test:
/// killed when the test lets go of it (its `Child`).
final class MotoS3 {
    private let child: Child
    /// `http://127.0.0.1:PORT`.
    let endpoint: String

    /// moto; with `notImplemented`, behind a proxy that answers `501 NotImplemented` to
    /// `PutObject`s with conditional or checksum headers, as stores without them do; with
    /// `recording`, behind a proxy that records every request (`requests()`).
    init(notImplemented: Bool = false, recording: Bool = false) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("moto_s3.py").path
        let python = Harness.environment["HAUL_TEST_PYTHON"] ?? "python3"
        let flags = (notImplemented ? ["--not-implemented"] : []) + (recording ? ["--record"] : [])
        let started = try Child(python, ["-u", script] + flags, environment: [:])
        var port = 0
        Harness.waitUntil(timeout: 60) {
            if let line = started.stdout.split(separator: "\n").first, line.hasPrefix("PORT "), let value = Int(line.dropFirst(5)) { port = value }
            return port > 0 || !started.isRunning
        }
        guard port > 0 else {
            started.signal(SIGKILL)
            throw TestFailure("moto did not start (pip install 'moto[server]' into the test venv): \(started.stderr)")
        }
        child = started
        endpoint = "http://127.0.0.1:\(port)"
    }

    /// Every request the proxy passed on, as `METHOD /path?query` (`init(recording: true)` only).
    func requests() throws -> [String] {
        let result = try Run.program("/usr/bin/curl", ["-s", endpoint + "/_requests"])
        return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String]) ?? []
    }

    /// How many requests the proxy refused with 501 (`init(notImplemented: true)` only).
    func refused() throws -> Int {
        let result = try Run.program("/usr/bin/curl", ["-s", endpoint + "/_refused"])
        return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}
