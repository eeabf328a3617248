import Foundation
import HaulTestSupport
import Testing

/// RangeHTTPServer (PyPI `rangehttpserver`, pinned in scripts/test-requirements.txt): Python's
/// http.server with ranges, as people run it (`python -m RangeHTTPServer`). It sends
/// `Last-Modified` but no ETag, ignores `If-Range`, and answers a range of an empty file with a
/// bare `416` (no `Content-Range`). Serves one folder on a free loopback port; killed when released.
final class RangeServer: @unchecked Sendable {
    // Used by one test on one task at a time.
    private let child: Child
    let root: String
    let port: Int

    var base: String { "http://127.0.0.1:\(port)" }

    init() throws {
        root = Harness.temporaryDirectory("range-server")
        port = Reliability.freePort()
        let python = Harness.environment["HAUL_TEST_PYTHON"] ?? "/usr/bin/python3"
        child = try Child(python, ["-m", "RangeHTTPServer", String(port), "--bind", "127.0.0.1"], environment: [:], directory: root)
        let up = Harness.waitUntil(timeout: 15) {
            let probe = try? Run.program("/usr/bin/curl", ["-s", "-o", "/dev/null", "--max-time", "2", base + "/"], environment: [:], timeout: 5)
            return probe?.status == 0 || !child.isRunning
        }
        guard up, child.isRunning else {
            child.signal(SIGKILL)
            throw TestFailure("RangeHTTPServer did not start (is rangehttpserver installed for \(python)?): \(child.stderr)")
        }
    }

    deinit {
        child.signal(SIGKILL)
        _ = child.wait(timeout: 5)
    }

    /// Writes `data` as `name` (atomically, with the given modification time) and returns its URL.
    @discardableResult
    func put(_ name: String, _ data: Data, modified: Date = Date(timeIntervalSince1970: 1_700_000_000)) throws -> String {
        let path = root + "/" + name
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: path)
        return base + "/" + name
    }
}
