import Foundation
import HaulTestSupport
import Testing

/// Storage files are opened beneath the storage root without following symlinks, and what Haul publishes
/// or extracts gets the modes the process's umask allows.
@Suite("storage safety")
struct StorageSafetyTests {
    @Test(
        "a symlink planted where the partial file goes, pointing outside the root, is never written through",
        arguments: [(2 * 1_048_576 + 3, ["--segment-size", "1MiB"]), (1000, [])])
    func plantedPartialIsRefused(size: Int, flags: [String]) throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("planted")
        let outside = Harness.temporaryDirectory("outside")
        defer {
            try? FileManager.default.removeItem(atPath: work)
            try? FileManager.default.removeItem(atPath: outside)
        }
        let file = try Origin.file("planted/file-\(size).bin", size: size)
        let precious = Data("precious, not Haul's".utf8)
        try precious.write(to: URL(fileURLWithPath: outside + "/victim"))
        try FileManager.default.createSymbolicLink(atPath: work + "/file.bin.haul-partial", withDestinationPath: outside + "/victim")
        let result = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/file.bin"] + flags, database: database.url, timeout: 120)
        #expect(FileManager.default.contents(atPath: outside + "/victim") == precious, "the file outside the root was written through the link")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == ["victim"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("symbolic link"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work + "/file.bin"))
    }

    @Test("a part path altered in the database to lead out of the root is refused, not read into the file")
    func alteredPartPathIsRefused() throws {
        let cluster = try Cluster("tampered")
        let outside = Harness.temporaryDirectory("outside-parts")
        defer { try? FileManager.default.removeItem(atPath: outside) }
        let secret = Data(repeating: UInt8(ascii: "S"), count: 1_048_576)
        try secret.write(to: URL(fileURLWithPath: outside + "/victim"))
        let file = try Origin.file("tampered/parts.bin", size: 3 * 1_048_576)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "parts.bin", "--layout", "parts", "--segment-size", "1MiB"])
        let fetcher = try cluster.startWorker(["--roles", "planner,fetcher"])
        let fetched = try Harness.waitUntil(timeout: 60) {
            try cluster.database.scalar("SELECT count(*) FILTER (WHERE state = 'done') || '/' || count(*) FROM segments WHERE transfer_id = \(id)") == "3/3"
        }
        #expect(fetched, "\(fetcher.stderr)")
        cluster.stopWorkers()
        let relative = "../" + (outside as NSString).lastPathComponent + "/victim"
        _ = try cluster.database.scalar(
            "UPDATE segment_parts SET path = '\(relative)' WHERE segment_id = (SELECT id FROM segments WHERE transfer_id = \(id) ORDER BY byte_offset LIMIT 1)")
        try cluster.startWorker(["--roles", "finalizer,rescuer"])
        #expect(try cluster.waitFinal([id]) == ["failed"])
        let error = try cluster.database.scalar("SELECT error FROM transfers WHERE id = \(id)")
        #expect(error.contains("unsafe storage path"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/parts.bin"))
    }

    @Test("a published file has the mode the umask allows: 0664 under umask 002, 0600 under 077")
    func publishedFilesHonourTheUmask() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("umask-get")
        defer { try? FileManager.default.removeItem(atPath: work) }
        for (mask, size, mode) in [("002", 3 * 1_048_576, 0o664), ("077", 5000, 0o600)] {
            let file = try Origin.file("umask/get-\(mask).bin", size: size)
            let result = try Self.haul(
                umask: mask, ["get", Harness.origin + file.path, "-o", work + "/\(mask).bin", "--segment-size", "1MiB"], database: database.url)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Self.mode(work + "/\(mask).bin") == mode, "umask \(mask): mode \(String(Self.mode(work + "/\(mask).bin"), radix: 8))")
        }
    }

    @Test("a worker under umask 002 creates group-writable folders and files in the storage root")
    func workerFoldersHonourTheUmask() throws {
        let cluster = try Cluster("umask-worker")
        let file = try Origin.file("umask/worker.bin", size: 2 * 1_048_576)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "deep/er/file.bin", "--segment-size", "1MiB"])
        let worker = try Child(
            "/bin/sh", ["-c", "umask 002 && exec \"$0\" \"$@\"", Harness.haulBinary, "worker", "--storage", cluster.storage, "--poll-interval", "200ms"],
            environment: ["DATABASE_URL": cluster.database.url])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 15)
        }
        #expect(try cluster.waitFinal([id]) == ["done"], "\(worker.stderr)")
        #expect(Self.mode(cluster.storage + "/deep") == 0o775)
        #expect(Self.mode(cluster.storage + "/deep/er") == 0o775)
        #expect(Self.mode(cluster.storage + "/deep/er/file.bin") == 0o664)
    }

    @Test("extracted files and folders have the modes the umask allows")
    func extractedFilesHonourTheUmask() throws {
        let work = Harness.temporaryDirectory("umask-extract")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try FileManager.default.createDirectory(atPath: work + "/tree/sub", withIntermediateDirectories: true)
        try Data("text".utf8).write(to: URL(fileURLWithPath: work + "/tree/sub/plain.txt"))
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: work + "/tree/run.sh"))
        chmod(work + "/tree/run.sh", 0o755)
        let zipped = try Run.haul(["zip", work + "/tree.zip", work + "/tree"], database: nil)
        #expect(zipped.status == 0, "\(zipped.stderr)")
        let result = try Self.haul(umask: "027", ["extract", work + "/tree.zip", work + "/out"], database: nil)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.mode(work + "/out") == 0o750)
        #expect(Self.mode(work + "/out/sub") == 0o750)
        #expect(Self.mode(work + "/out/sub/plain.txt") == 0o640)
        #expect(Self.mode(work + "/out/run.sh") == 0o750)
    }

    /// Runs `haul` under a umask, as a shell would.
    static func haul(umask: String, _ arguments: [String], database: String?) throws -> Run.Result {
        var environment: [String: String] = [:]
        if let database { environment["DATABASE_URL"] = database }
        return try Run.program("/bin/sh", ["-c", "umask \(umask) && exec \"$0\" \"$@\"", Harness.haulBinary] + arguments, environment: environment)
    }

    static func mode(_ path: String) -> Int {
        var info = stat()
        guard lstat(path, &info) == 0 else { return -1 }
        return Int(info.st_mode & 0o7777)
    }
}

/// Extraction limits through the fleet: a transfer's ratio limit refuses 40 MiB of zeros that the
/// defaults accept, a transfer may raise limits only up to its worker's ceiling, and a refusal
/// leaves nothing in the storage root but the archive.
@Suite("extraction limits in workers")
struct WorkerExtractionLimitTests {
    @Test("a tar.gz of zeros is refused under the transfer's ratio limit, accepted by default and with raised limits, refused again under a worker's ceiling")
    func perTransferAndPerWorker() throws {
        let cluster = try Cluster("bomb")
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("HaulArchiveTests/Fixtures/bombs.py").path
        let generated = try Run.program("/usr/bin/python3", [fixture, Harness.docroot + "/bombs", "40"], environment: [:])
        #expect(generated.status == 0, "\(generated.stderr)")
        let url = Harness.origin + "/bombs/zeros.tar.gz"
        let raised = ["--extract-max-ratio", "5000", "--extract-max-size", "100MiB"]
        let refused = try cluster.enqueue(url, ["--dest", "a/bomb.tgz", "--extract-max-ratio", "200"])
        let accepted = try cluster.enqueue(url, ["--dest", "b/bomb.tgz"] + raised)
        let byDefault = try cluster.enqueue(url, ["--dest", "d/bomb.tgz", "--extract"])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([refused, accepted, byDefault]) == ["failed", "done", "done"])
        let error = try cluster.database.scalar("SELECT error FROM transfers WHERE id = \(refused)")
        #expect(error.contains("expands") && error.contains("more than the limit of 200"), "\(error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cluster.storage + "/a") == ["bomb.tgz"], "no staging left")
        #expect(Self.size(cluster.storage + "/b/bomb/zeros") == 40 << 20)
        #expect(Self.size(cluster.storage + "/d/bomb/zeros") == 40 << 20)
        cluster.stopWorkers()

        let capped = try cluster.enqueue(url, ["--dest", "c/bomb.tgz"] + raised)
        try cluster.startWorker(["--extract-max-ratio", "100"])
        #expect(try cluster.waitFinal([capped]) == ["failed"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: cluster.storage + "/c") == ["bomb.tgz"], "no staging left")
    }

    static func size(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : -1
    }
}
