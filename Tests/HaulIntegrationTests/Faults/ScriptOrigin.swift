import Foundation
import HaulTestSupport

/// Starts one of the suite's Python origins (`Faults/*.py`), which bind a free port and print
/// `PORT <n>` first; returns the running process and its port.
enum ScriptOrigin {
    static func start(_ script: String, _ arguments: [String] = [], what: String) throws -> (child: Child, port: Int) {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(script).path
        let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/python3"
        let child = try Child(python, ["-u", path] + arguments, environment: [:])
        var found = 0
        Harness.waitUntil(timeout: 15) {
            if let line = child.stdout.split(separator: "\n").first, line.hasPrefix("PORT "), let value = Int(line.dropFirst(5)) { found = value }
            return found > 0 || !child.isRunning
        }
        guard found > 0 else {
            child.signal(SIGKILL)
            throw TestFailure("the \(what) did not start: \(child.stderr)")
        }
        return (child, found)
    }
}
