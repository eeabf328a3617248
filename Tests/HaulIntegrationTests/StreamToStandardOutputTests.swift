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
        // Several segments: the connections ahead are stopped too.
        let file = try Origin.file("stream/head.bin", size: 24 * 1_048_576)
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
        let file = try Origin.file("stream/digest.bin", size: 9 * 1_048_576 + 5)
        let result = try Self.stream(Harness.origin + file.path, ["--checksum", "sha256:" + String(repeating: "0", count: 64)], places)
        #expect(result.status == 10, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("checksum mismatch"), "\(result.stderr)")
        #expect(Origin.sha256(file: places.out + "/stdout") == file.sha256)
        let right = try Self.stream(Harness.origin + file.path, ["--checksum", "sha256:" + file.sha256], places)
        #expect(right.status == 0 && !right.stderr.contains("haul:"), "\(right.stderr)")
    }
}

/// `-o -` with several connections: the segments ahead fetched at once and held in a bounded
/// reorder buffer, the bytes still out in order from the first one.
@Suite("get -o - with several connections")
struct StreamConnectionsTests {
    typealias Places = StreamToStandardOutputTests.Places
    static let mib = 1_048_576

    /// sha256 of the first `count` bytes of version `version` of a fault origin's `path` (made
    /// the way origin.py makes it), to tell which version bytes came from.
    static func originPrefixSHA256(_ path: String, version: Int, size: Int, count: Int) throws -> String {
        let script = "import hashlib,random,sys; print(hashlib.sha256(random.Random(sys.argv[1]).randbytes(int(sys.argv[2]))[:int(sys.argv[3])]).hexdigest())"
        let result = try Run.program("/usr/bin/python3", ["-c", script, "\(path)#\(version)", "\(size)", "\(count)"])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether two of the requests were at the origin at the same time.
    static func overlapping(_ requests: [FaultOrigin.Request]) -> Bool {
        requests.contains { a in
            requests.contains { b in a.number < b.number && b.time < (a.finished ?? .infinity) }
        }
    }

    @Test("a file of several segments through a pipe: exact, over more than one connection")
    func exactThroughPipe() throws {
        let places = Places()
        defer { places.remove() }
        // A name of this run's own: the access log keeps earlier runs' lines.
        let file = try Origin.file("stream/several-\(UUID().uuidString.prefix(8)).bin", size: 30 * Self.mib + 4321)
        defer { try? FileManager.default.removeItem(atPath: Harness.docroot + file.path) }
        let result = try Run.program(
            "/bin/bash",
            ["-c", "set -o pipefail; \"$0\" get \"$1\" -o - -x 4 | cat > \"$2\"", Harness.haulBinary, Harness.origin + file.path, places.out + "/piped"],
            environment: places.environment, directory: places.work)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: places.out + "/piped") == file.sha256)
        let lines = Origin.requests(for: file.path)
        let connections = Set(lines.compactMap { $0.split(separator: " ").last.flatMap { $0.hasPrefix("conn=") ? $0 : nil } })
        #expect(lines.count == 4 && lines.allSatisfy { $0.contains("\" 206 ") }, "8 MiB segments: \(lines)")
        #expect(connections.count == 4, "\(lines)")
        #expect(places.leftovers().isEmpty, "\(places.leftovers())")
    }

    @Test("from a slow origin the first bytes come out while several connections are still fetching")
    func firstBytesWithSeveralConnections() throws {
        let places = Places()
        defer { places.remove() }
        let origin = try FaultOrigin()
        // 1 MiB/s a connection: the file would take 24 s on one, the first chunk comes at once.
        let file = try origin.create("/stream/slow-several.bin", size: 24 * Self.mib, ["rate": Self.mib])
        let stdout = places.out + "/stdout"
        let child = try Child(
            "/bin/sh", ["-c", "exec \"$0\" get \"$1\" -o - -x 3 > \"$2\"", Harness.haulBinary, file.url, stdout], environment: places.environment,
            directory: places.work)
        defer {
            child.signal(SIGKILL)
            _ = child.wait(timeout: 10)
        }
        let arrived = Harness.waitUntil(timeout: 60) { ((try? FileManager.default.attributesOfItem(atPath: stdout))?[.size] as? Int ?? 0) > 0 }
        let running = child.isRunning
        let sentByThen = try origin.stats(file.path).bodyBytesSent
        #expect(arrived, "no byte on standard output: \(child.stderr)")
        #expect(running, "haul had already exited when its first bytes were read")
        #expect(sentByThen < Int64(file.size), "the origin had sent the whole file before the first bytes came out")
        let several = try Harness.waitUntil(timeout: 60) { Self.overlapping(try origin.stats(file.path).requests) }
        let requests = try origin.stats(file.path).requests
        #expect(several, "never two requests at once: \(requests.map { ($0.number, $0.range ?? "") })")
        #expect(requests.dropFirst().allSatisfy { $0.ifRange == file.versions[0].etag && $0.status == 206 }, "\(requests.map { ($0.range ?? "", $0.status) })")
    }

    @Test("a connection cut inside a later segment resumes there, pinned with If-Range, and the stream stays exact")
    func cutSegmentResumes() throws {
        let places = Places()
        defer { places.remove() }
        let origin = try FaultOrigin()
        // Request 2 is the first of a segment ahead: it is cut after 1 000 000 bytes.
        let file = try origin.create("/stream/cut-ahead.bin", size: 20 * Self.mib + 99, ["reset_at": 1_000_000, "reset_after": 1])
        let result = try StreamToStandardOutputTests.stream(file.url, ["-x", "3"], places)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: places.out + "/stdout") == file.sha256)
        let requests = try origin.stats(file.path).requests
        let cut = try #require(requests.first { $0.fault == "reset" }, "\(requests.map { ($0.range ?? "", $0.fault ?? "") })")
        let cutStart = try #require(cut.start)
        // From the next byte received (the reset may drop bytes the kernel held), to the same end.
        let resumed = requests.filter { $0.number > cut.number && $0.end == cut.end && ($0.start ?? 0) > cutStart }
        #expect(
            resumed.count == 1 && resumed[0].status == 206 && resumed[0].ifRange == file.versions[0].etag, "\(requests.map { ($0.range ?? "", $0.status) })")
    }

    @Test("a file replaced while its segments are fetched: origin-changed, status 1, and only the first version's bytes were written")
    func changedMidStream() throws {
        let places = Places()
        defer { places.remove() }
        let origin = try FaultOrigin()
        let size = 20 * Self.mib
        // The first answer is of version 0; every range after it finds version 1.
        let file = try origin.create("/stream/changed-ahead.bin", size: size, ["replace_after": 1])
        let result = try StreamToStandardOutputTests.stream(file.url, ["-x", "3"], places)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("origin changed"), "\(result.stderr)")
        let sent = FileManager.default.contents(atPath: places.out + "/stdout") ?? Data()
        #expect(sent.count < size, "\(sent.count)")
        #expect(
            Origin.sha256(sent) == (try Self.originPrefixSHA256(file.path, version: 0, size: size, count: sent.count)), "bytes of another version were written")
    }

    @Test("-x 1 with --segment-size: one connection at a time, segment after segment, the first cut at its end")
    func oneConnectionSegmentBySegment() throws {
        let places = Places()
        defer { places.remove() }
        let origin = try FaultOrigin()
        // Paced, so that the writer has taken the whole first segment before the rest comes.
        let file = try origin.create("/stream/one-by-one.bin", size: 3 * Self.mib + 5, ["rate": 8 * Self.mib])
        let result = try StreamToStandardOutputTests.stream(file.url, ["-x", "1", "--segment-size", "1MiB"], places)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: places.out + "/stdout") == file.sha256)
        let requests = try origin.stats(file.path).requests
        #expect(
            requests.map { $0.range ?? "" } == ["bytes=0-", "bytes=1048576-2097151", "bytes=2097152-3145727", "bytes=3145728-"],
            "\(requests.map { $0.range ?? "" })")
    }

    @Test(
        "an origin that ignores ranges, names no version, or has an empty file is read whole over one connection",
        arguments: [(["norange_after": "0"], 20), (["validators": "none"], 20), ([:], 0)] as [([String: String], Int)])
    func oneConnectionWhenRangesCannotBeJoined(faults: [String: String], mebibytes: Int) throws {
        let places = Places()
        defer { places.remove() }
        let origin = try FaultOrigin()
        let file = try origin.create("/stream/whole.bin", size: mebibytes * Self.mib, faults)
        let result = try StreamToStandardOutputTests.stream(file.url, ["-x", "4"], places)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: places.out + "/stdout") == file.sha256)
        #expect(try origin.stats(file.path).count == 1)
    }

    @Test("a reader that pauses: haul stops fetching with its reorder buffer full, its memory bounded, then finishes exact")
    func pausedReaderStaysBounded() throws {
        let places = Places()
        defer { places.remove() }
        let origin = try FaultOrigin()
        let file = try origin.create("/stream/paused.bin", size: 192 * Self.mib)
        let fifo = places.out + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let child = try Child(
            "/bin/sh", ["-c", "exec \"$0\" get \"$1\" -o - -x 4 > \"$2\"", Harness.haulBinary, file.url, fifo], environment: places.environment,
            directory: places.work)
        defer {
            child.signal(SIGKILL)
            _ = child.wait(timeout: 10)
        }
        let reader = try #require(FileHandle(forReadingAtPath: fifo))
        let first = reader.readData(ofLength: 1)
        #expect(first.count == 1)
        // The reader pauses: the origin sends until haul's buffer and the sockets are full.
        var last: Int64 = -1
        let settled = try Harness.waitUntil(timeout: 90) {
            let sent = try origin.stats(file.path).bodyBytesSent
            defer { last = sent }
            Thread.sleep(forTimeInterval: 1)
            return sent == last && sent > 0
        }
        #expect(settled)
        let status = (try? String(contentsOfFile: "/proc/\(child.pid)/status", encoding: .utf8)) ?? ""
        let peakKiB = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap { Int($0.split(separator: " ")[1]) } ?? .max
        // 64 MiB of reorder buffer, and the rest of a process that holds no segment.
        #expect(peakKiB < 128 * 1024, "peak RSS \(peakKiB) KiB with the reader paused")
        #expect(last < Int64(file.size) - 64 * Int64(Self.mib), "the origin sent \(last) bytes to a paused reader")
        let rest = reader.readDataToEndOfFile()
        #expect(Origin.sha256(first + rest) == file.sha256)
        #expect(child.wait(timeout: 60) && child.exitStatus == 0, "\(child.stderr)")
    }
}
