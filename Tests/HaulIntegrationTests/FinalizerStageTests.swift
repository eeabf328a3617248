import Foundation
import HaulTestSupport
import Testing

/// The finalizer's optional stages end to end: `--extract` and `--upload-to`, with real workers,
/// archives written by Python's zipfile, and the strict multipart receiver of the upload tests.
@Suite("finalizer stages")
struct FinalizerStageTests {
    static var python: String { Harness.environment["HAUL_TEST_PYTHON"] ?? "/usr/bin/python3" }

    /// Writes a zip into the origin's document root with Python's zipfile; returns its URL path.
    private func zip(_ name: String, entries: [(String, String)]) throws -> String {
        let path = Harness.docroot + "/stages/" + name
        try FileManager.default.createDirectory(atPath: Harness.docroot + "/stages", withIntermediateDirectories: true)
        let script = """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                for i in range(2, len(sys.argv), 2):
                    z.writestr(sys.argv[i], sys.argv[i + 1])
            """
        let result = try Run.program(Self.python, ["-c", script, path] + entries.flatMap { [$0.0, $0.1] }, environment: [:])
        guard result.status == 0 else { throw TestFailure("zip failed: \(result.stderr)") }
        chmod(path, 0o644)
        return "/stages/" + name
    }

    @Test("--extract: the transfer is done only when the tree is extracted")
    func extracts() throws {
        let cluster = try Cluster("extract")
        let path = try zip("tree-\(UUID().uuidString.prefix(6)).zip", entries: [("a.txt", "alpha"), ("dir/b.txt", "beta"), ("dir/empty/", "")])
        let id = try cluster.enqueue(Harness.origin + path, ["--dest", "pkg.zip", "--extract"])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id]) == ["done"], "\((try? cluster.status(id)["error"]) ?? "")")
        #expect(try String(contentsOfFile: cluster.storage + "/pkg/a.txt", encoding: .utf8) == "alpha")
        #expect(try String(contentsOfFile: cluster.storage + "/pkg/dir/b.txt", encoding: .utf8) == "beta")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: cluster.storage + "/pkg/dir/empty", isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test("--extract of a hostile archive fails the transfer with the reason, and nothing lands outside")
    func refusesHostileArchive() throws {
        let cluster = try Cluster("hostile")
        let marker = "escaped-\(UUID().uuidString.prefix(6)).txt"
        let path = try zip("evil-\(UUID().uuidString.prefix(6)).zip", entries: [("ok.txt", "fine"), ("../../\(marker)", "gotcha")])
        let id = try cluster.enqueue(Harness.origin + path, ["--dest", "in/evil.zip", "--extract-to", "in/tree"])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id]) == ["failed"])
        let error = try cluster.status(id)["error"] as? String ?? ""
        #expect(error.contains("refused") && error.contains(".."), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/in/tree"), "nothing half-extracted")
        let parent = (cluster.storage as NSString).deletingLastPathComponent
        #expect(!FileManager.default.fileExists(atPath: parent + "/" + marker) && !FileManager.default.fileExists(atPath: cluster.storage + "/" + marker))
    }

    /// The strict multipart receiver of the upload tests, on a port the kernel chose.
    private func receiver(_ arguments: [String] = []) throws -> (Child, String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("HaulUploadTests/Receivers/multipart_receiver.py").path
        let child = try Child(Self.python, [script] + arguments, environment: [:])
        var port = ""
        _ = Harness.waitUntil(timeout: 20) {
            port = child.stdout.split(separator: "\n").first { $0.hasPrefix("PORT ") }.map { String($0.dropFirst(5)) } ?? ""
            return !port.isEmpty || !child.isRunning
        }
        guard !port.isEmpty else { throw TestFailure("multipart receiver did not start: \(child.stderr)") }
        return (child, "http://127.0.0.1:\(port)/upload")
    }

    @Test("--upload-to: the file is streamed to a strict multipart parser, with its fields, and the answer is recorded")
    func uploads() throws {
        let cluster = try Cluster("upload")
        let (receiver, url) = try receiver()
        defer { receiver.signal(SIGKILL) }
        let file = try Origin.file("stages/upload.csv", size: 3 * 1_048_576 + 11)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "up/data.csv", "--upload-to", url, "--field", "kind=nightly dump ✓"])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id]) == ["done"], "\((try? cluster.status(id)["error"]) ?? "")")
        let answer = try cluster.database.scalar("SELECT upload_result FROM transfers WHERE id = \(id)")
        #expect(answer.hasPrefix("200"), "\(answer)")
        #expect(answer.contains(file.sha256) && answer.contains("nightly dump ✓") && answer.contains("data.csv"), "\(answer)")
        #expect(answer.contains("text/csv"), "the part's type comes from /etc/mime.types: \(answer)")
    }

    @Test("a refused upload fails the transfer with the server's status")
    func refusedUpload() throws {
        let cluster = try Cluster("upload-403")
        let (receiver, url) = try receiver(["--status", "403"])
        defer { receiver.signal(SIGKILL) }
        let file = try Origin.file("stages/refused.bin", size: 70_000)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "r.bin", "--upload-to", url])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id]) == ["failed"])
        let error = try cluster.status(id)["error"] as? String ?? ""
        #expect(error.contains("403") && error.contains("haul retry"), "\(error)")
        #expect(cluster.sha256("r.bin") == file.sha256, "the download itself is kept for the retry")
    }
}
