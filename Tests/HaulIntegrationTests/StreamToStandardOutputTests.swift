import Foundation
import HaulTestSupport
import Testing

/// `haul get URL -o -` as curl users pipe it: the bytes flow as the origin sends them, exact,
/// nothing on disk, only the file on standard output.
@Suite("get -o - streams")
struct StreamToStandardOutputTests {
    /// A folder to run in and a HAUL_HOME of its own, both to be left empty.
    struct Places {
        let work = Harness.temporaryDirectory("stream-work")
        let home = Harness.temporaryDirectory("stream-home")
        let out = Harness.temporaryDirectory("stream-out")
        var environment: [String: String] { ["HAUL_HOME": home] }

        /// Every file left in the working folder or under HAUL_HOME.
        func leftovers() -> [String] {
            [work, home].flatMap { root in (FileManager.default.subpaths(atPath: root) ?? []).map { root + "/" + $0 } }
        }

        func remove() {
            for folder in [work, home, out] { try? FileManager.default.removeItem(atPath: folder) }
        }
    }

    /// Runs `haul get URL -o - EXTRA` with standard output into `places.out/stdout`.
    static func stream(_ url: String, _ extra: [String] = [], _ places: Places) throws -> Run.Result {
        try Run.program(
            "/bin/sh", ["-c", "exec \"$0\" get \"$1\" -o - \"$@\" > \"$OUT\"", Harness.haulBinary, url] + extra,
            environment: places.environment.merging(["OUT": places.out + "/stdout"]) { $1 }, directory: places.work)
    }

    @Test("the stream is the file, byte for byte, and nothing is left on disk")
    func exactStream() throws {
        let places = Places()
        defer { places.remove() }
        let file = try Origin.file("stream/exact.bin", size: 9 * 1_048_576 + 123)
        let result = try Self.stream(Harness.origin + file.path, [], places)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: places.out + "/stdout") == file.sha256)
        #expect(!result.stderr.contains("haul:"), "\(result.stderr)")
        #expect(places.leftovers().isEmpty, "\(places.leftovers())")
    }

    @Test("the first bytes reach standard output while the origin is still sending the rest")
    func firstBytesEarly() throws {
        let places = Places()
        defer { places.remove() }
        let origin = try FaultOrigin()
        // 256 KiB/s: the whole file would take 16 s, the first chunk arrives at once.
        let file = try origin.create("/stream/slow.bin", size: 4 * 1_048_576, ["rate": 262_144])
        let stdout = places.out + "/stdout"
        let child = try Child(
            "/bin/sh", ["-c", "exec \"$0\" get \"$1\" -o - > \"$2\"", Harness.haulBinary, file.url, stdout], environment: places.environment,
            directory: places.work)
        let arrived = Harness.waitUntil(timeout: 60) { ((try? FileManager.default.attributesOfItem(atPath: stdout))?[.size] as? Int ?? 0) > 0 }
        let running = child.isRunning
        let sentByThen = try origin.stats(file.path).bodyBytesSent
        #expect(arrived, "no byte on standard output: \(child.stderr)")
        #expect(running, "haul had already exited when its first bytes were read")
        #expect(sentByThen < Int64(file.size), "the origin had sent the whole file before the first bytes came out")
        child.signal(SIGKILL)
        _ = child.wait(timeout: 10)
        #expect(places.leftovers().isEmpty, "\(places.leftovers())")
    }

    @Test("| head -c 100 ends haul quietly with status 0 and leaves no file behind")
    func closedPipe() throws {
        let places = Places()
        defer { places.remove() }
        let file = try Origin.file("stream/head.bin", size: 8 * 1_048_576)
        let result = try Run.program(
            "/bin/bash",
            [
                "-c", "\"$0\" get \"$1\" -o - | head -c 100 > \"$2\"; echo \"status=${PIPESTATUS[0]}\"", Harness.haulBinary, Harness.origin + file.path,
                places.out + "/head",
            ],
            environment: places.environment, directory: places.work)
        #expect(result.stdout == "status=0\n", "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.isEmpty, "no error text: \(result.stderr)")
        let head = FileManager.default.contents(atPath: places.out + "/head") ?? Data()
        let original = FileManager.default.contents(atPath: Harness.docroot + file.path) ?? Data()
        #expect(head.count == 100 && head == original.prefix(100))
        #expect(places.leftovers().isEmpty, "\(places.leftovers())")
    }

    @Test("a connection cut mid-stream resumes from the next byte, pinned with If-Range, and the stream stays exact")
    func resumesAfterReset() throws {
        let places = Places()
        defer { places.remove() }
        let origin = try FaultOrigin()
        let file = try origin.create("/stream/cut.bin", size: 3 * 1_048_576 + 7, ["reset_at": 1_000_000])
        let result = try Self.stream(file.url, [], places)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: places.out + "/stdout") == file.sha256)
        let requests = try origin.stats(file.path).requests
        #expect(requests.count == 2, "\(requests)")
        #expect(requests.last?.status == 206 && requests.last?.ifRange == file.versions[0].etag, "\(requests)")
        let resumedAt = try #require(requests.last?.range)
        #expect(resumedAt.hasPrefix("bytes=") && resumedAt.hasSuffix("-") && resumedAt != "bytes=0-", "\(resumedAt)")
        #expect(places.leftovers().isEmpty, "\(places.leftovers())")
    }

    @Test("a connection cut again and again counts only failures in a row: each cut that sent bytes resumes")
    func manyCutsWithProgress() throws {
        let places = Places()
        defer { places.remove() }
        let origin = try FaultOrigin()
        // 8 cuts: more than the 5 retries of the default 6 attempts, but each one made progress.
        let file = try origin.create("/stream/cuts.bin", size: 4 * 1_048_576, ["reset_at": 400_000, "reset_times": 8])
        let result = try Self.stream(file.url, [], places)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: places.out + "/stdout") == file.sha256)
        #expect(try origin.stats(file.path).count == 9)
        let noProgress = try origin.create("/stream/dead.bin", size: 1_048_576, ["status": 503])
        let failed = try Self.stream(noProgress.url, ["--retry", "1"], places)
        #expect(failed.status == 8 && (FileManager.default.contents(atPath: places.out + "/stdout") ?? Data()).isEmpty, "\(failed.stderr)")
        #expect(try origin.stats(noProgress.path).count == 2)
    }

    @Test("a file replaced while the connection was cut is never joined to the bytes sent: origin-changed, status 1")
    func changedOriginIsNotMixed() throws {
        let places = Places()
        defer { places.remove() }
        let origin = try FaultOrigin()
        let file = try origin.create("/stream/changed.bin", size: 2 * 1_048_576, ["reset_at": 500_000, "replace_after": 1])
        let result = try Self.stream(file.url, [], places)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("origin changed"), "\(result.stderr)")
        let sent = FileManager.default.contents(atPath: places.out + "/stdout") ?? Data()
        #expect(sent.count <= 500_000, "only bytes of the first version were sent: \(sent.count)")
    }

    @Test(
        "options a stream cannot honour are refused with one line and status 2, before any byte",
        arguments: [
            ["--extract"], ["--upload-to", "http://127.0.0.1:9/up"], ["-N"], ["--json"], ["-i", "/dev/null"],
            ["--mirror", "http://127.0.0.1:9/b.bin"], ["http://127.0.0.1:9/other.bin"],
        ])
    func refusals(extra: [String]) throws {
        let places = Places()
        defer { places.remove() }
        let result = try Self.stream("http://127.0.0.1:9/a.bin", extra, places)
        #expect(result.status == 2, "\(extra): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("haul: "), "\(result.stderr)")
        #expect((FileManager.default.contents(atPath: places.out + "/stdout") ?? Data()).isEmpty)
        #expect(places.leftovers().isEmpty, "\(places.leftovers())")
    }

    @Test("an origin's 404 exits 8 with nothing on standard output")
    func notFound() throws {
        let places = Places()
        defer { places.remove() }
        let result = try Self.stream(Harness.origin + "/stream/missing.bin", [], places)
        #expect(result.status == 8, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("404"), "\(result.stderr)")
        #expect((FileManager.default.contents(atPath: places.out + "/stdout") ?? Data()).isEmpty)
    }

    @Test("a --checksum mismatch: every byte was sent, then status 10 and one line")
    func checksumMismatch() throws {
        let places = Places()
        defer { places.remove() }
        let file = try Origin.file("stream/digest.bin", size: 1_048_576 + 5)
        let result = try Self.stream(Harness.origin + file.path, ["--checksum", "sha256:" + String(repeating: "0", count: 64)], places)
        #expect(result.status == 10, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("checksum mismatch"), "\(result.stderr)")
        #expect(Origin.sha256(file: places.out + "/stdout") == file.sha256)
        let right = try Self.stream(Harness.origin + file.path, ["--checksum", "sha256:" + file.sha256], places)
        #expect(right.status == 0 && !right.stderr.contains("haul:"), "\(right.stderr)")
    }
}
