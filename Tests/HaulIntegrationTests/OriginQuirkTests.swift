import Foundation
import HaulTestSupport
import Testing

/// What real origins do that the happy path does not, each against the
/// fault origin (Faults/origin.py) set up to behave like the server that does it.
@Suite("origins: quirks of real servers")
struct OriginQuirkTests {
    static let mib = Reliability.mebibyte

    static func start(
        _ label: String, _ served: FaultOrigin.Served, segment: String = "1MiB", enqueue: [String] = [], worker: [String] = []
    ) throws -> (cluster: Cluster, id: Int64, worker: Child) {
        try OriginFaultTests.start(label, served, segment: segment, enqueue: enqueue, worker: worker)
    }

    // MARK: validators

    @Test("no ETag, If-Range ignored, Last-Modified moves on: the transfer starts over, never a mixed file")
    func lastModifiedPinned() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create(
            "/lm.bin", size: 4 * Self.mib, ["validators": "last-modified", "ignore_if_range": 1, "replace_after": 1])
        let (cluster, id, worker) = try Self.start("lm-pinned", served)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.versions[1].sha256, "exactly the new version, never a mix of two")
        #expect(try cluster.generation(id) == 1, "the new Last-Modified started the transfer over")
        #expect(!Reliability.logLines(worker, containing: "origin changed", "Last-Modified").isEmpty, "the log names what moved:\n\(worker.stderr)")
    }

    @Test("no validator at all: status says so (text and --json), and a new size is still noticed")
    func noValidator() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create(
            "/bare.bin", size: 3 * Self.mib, ["validators": "none", "resize_after": 1, "resize_size": 3 * Self.mib + 99])
        let (cluster, id, _) = try Self.start("no-validator", served)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.versions[1].sha256)
        #expect(try cluster.generation(id) == 1, "the size is the one validator left, and it is checked")
        #expect(try cluster.status(id)["no_validator"] as? Bool == true)
        let text = try cluster.haul(["status", String(id)]).stdout
        #expect(text.contains("validator: none"), "\(text)")
    }

    @Test("a shifted Content-Range of the same version is discarded and the segment retried, not started over")
    func shiftedOnce() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/shift-once.bin", size: 3 * Self.mib, ["shift": 7, "shift_after": 1, "shift_times": 1])
        let (cluster, id, _) = try Self.start("shift-once", served)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.sha256)
        #expect(try cluster.generation(id) == 0, "a faulty answer is not a new version")
        let stats = try origin.stats(served.path)
        let shifted = try #require(stats.requests.first { $0.fault == "shift" })
        #expect(stats.requests.contains { $0.number > shifted.number && $0.range == shifted.range }, "the same range is asked again")
    }

    @Test("a Content-Range shifted past the file's end, validators unchanged, is a faulty answer retried, never a new version")
    func shiftedPastTheEnd() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // The last segment (64 KiB) answered 4 KiB further on: its range ends past the file's size.
        let served = try origin.create("/shift-past-end.bin", size: 3 * Self.mib + 65536, ["shift_past_end": 4096])
        let (cluster, id, worker) = try Self.start("shift-past-end", served)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.sha256)
        #expect(try cluster.generation(id) == 0, "a faulty answer is not a new version")
        #expect(Reliability.logLines(worker, containing: "origin changed").isEmpty, "\(worker.stderr)")
        let stats = try origin.stats(served.path)
        let shifted = try #require(stats.requests.first { $0.fault == "shift_past_end" })
        #expect(stats.requests.contains { $0.number > shifted.number && $0.range == shifted.range }, "the same range is asked again")
    }

    // MARK: empty files

    @Test("an empty file whose origin answers a bare 416 is saved empty", arguments: ["worker", "get"])
    func emptyBare416(path: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/empty-\(path).bin", size: 0, ["bare_416": 1])
        if path == "worker" {
            let (cluster, id, _) = try Self.start("empty-416", served)
            #expect(try cluster.waitFinal([id], timeout: 30) == ["done"])
            let attributes = try FileManager.default.attributesOfItem(atPath: cluster.storage + "/out.bin")
            #expect((attributes[.size] as? Int) == 0)
        } else {
            let database = try TestDatabase()
            let work = Harness.temporaryDirectory("empty-get")
            defer { try? FileManager.default.removeItem(atPath: work) }
            let result = try Run.haul(["get", served.url, "--max-attempts", "2"], database: database.url, directory: work, timeout: 60)
            #expect(result.status == 0, "\(result.stderr)")
            let attributes = try FileManager.default.attributesOfItem(atPath: work + "/empty-get.bin")
            #expect((attributes[.size] as? Int) == 0)
        }
    }

    // MARK: names

    @Test("names from the URL are percent-decoded once", arguments: [("pct%2541.bin", "pct%41.bin"), ("a%252Fb.bin", "a%2Fb.bin")])
    func decodedOnce(encoded: String, expected: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // The origin matches the raw request path; /_create's query is decoded once.
        let served = try origin.create("/" + encoded.replacingOccurrences(of: "%", with: "%25"), size: 10_000)
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("names")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let result = try Run.haul(["get", origin.base + "/" + encoded], database: database.url, directory: work, timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work) == [expected])
        #expect(Origin.sha256(file: work + "/" + expected) == served.sha256)
    }

    // MARK: honest messages

    @Test("after the last attempt nothing says 'will be retried'; while retrying, get says so as it happens")
    func honestFinalMessages() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/gone-bad.bin", size: 2 * Self.mib, ["status": 503, "status_after": 1])
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("honest")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let result = try Run.haul(
            ["get", served.url, "-o", work + "/out.bin", "--segment-size", "1MiB", "--max-attempts", "3", "--connections", "1"], database: database.url,
            timeout: 120)
        #expect(result.status == 8, "\(result.stderr)")
        let last = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.contains("503") && last.contains("gave up after 3 attempts") && !last.contains("will be retried"), "\(last)")
        // Two retries (attempts 2 and 3), each announced on get's progress line as it begins to wait.
        let announced = result.stderr.components(separatedBy: "retrying in ").dropFirst().filter { $0.contains("503") }
        #expect(announced.count >= 2, "retries are announced as they happen:\n\(result.stderr)")
        let listed = try Run.haul(["list"], database: database.url).stdout
        #expect(listed.contains("503") && !listed.contains("will be retried"), "\(listed)")
        let shown = try Run.haul(["status", "1"], database: database.url).stdout
        #expect(shown.contains("503") && !shown.contains("will be retried") && !shown.contains("retrying"), "\(shown)")
    }

    @Test("while a failed attempt waits, status (text and --json) and list say 'retrying in N s' and why")
    func retryingShown() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/wait.bin", size: 2 * Self.mib, ["status": 503, "status_after": 1, "retry_after": 30])
        let (cluster, id, _) = try Self.start("retrying", served)
        var status: [String: Any] = [:]
        #expect(
            try Harness.waitUntil(timeout: 30) {
                status = try cluster.status(id)
                return status["retry_in"] is Double || status["retry_in"] is Int
            }, "status --json shows retry_in: \(status)")
        #expect((status["retry_reason"] as? String ?? "").contains("503"), "\(status)")
        let text = try cluster.haul(["status", String(id)]).stdout
        #expect(text.contains("retrying:  in ") && text.contains("503"), "\(text)")
        let listed = try cluster.haul(["list"]).stdout
        #expect(listed.contains("retrying in ") && listed.contains("503"), "\(listed)")
    }

    @Test("an error after a redirect names the URL that failed, not the first one")
    func redirectedFailure() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/moved.bin", size: 100_000, ["redirect": 1, "status": 404])
        let (cluster, id, _) = try Self.start("redirect", served)
        #expect(try cluster.waitFinal([id], timeout: 30) == ["failed"])
        let error = try cluster.error(id)
        #expect(error.contains("404") && error.contains("/_to/moved.bin"), "\(error)")
    }

    // MARK: host limit

    @Test("host-limit 2 with three workers: the origin never sends more than 2 bodies at once")
    func hostLimitAtTheOrigin() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // Rate-limited so that requests overlap long enough to be counted at the origin.
        let sizes = [2, 24, 2, 2, 24, 2, 2]
        let served = try sizes.enumerated().map { index, size in
            try origin.create("/limit/\(index).bin", size: size * Self.mib, ["rate": 6 * Self.mib])
        }
        let cluster = try Cluster("origin-limit")
        #expect(try cluster.haul(["host-limit", "set", "127.0.0.1:\(origin.port)", "2"]).status == 0)
        let path = Harness.temporaryDirectory("limit-manifest") + "/list.txt"
        try served.map { "\($0.url) \($0.path.dropFirst())" }.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try cluster.haul(["enqueue", "--manifest", path, "--batch", "limit"]).status == 0)
        for _ in 0..<3 { try cluster.startWorker() }
        #expect(try cluster.haul(["wait", "--batch", "limit", "--timeout", "120s"]).status == 0)
        for file in served { #expect(cluster.sha256(String(file.path.dropFirst())) == file.sha256) }
        // A probe handed on to the fetchers (the 24 MiB files) stops at its head: its body no
        // longer flows when the fetchers ask again.
        for file in served where file.size > 16 * Self.mib {
            let requests = try origin.stats(file.path).requests
            let probe = try #require(requests.first)
            #expect(probe.sent < probe.length / 4 && probe.fault == "client-closed", "\(probe)")
            let next = requests.dropFirst().map(\.time).min() ?? .infinity
            #expect((probe.finished ?? .infinity) <= next, "the probe's body ended before the fetchers' requests began")
        }
        let (most, when) = try Self.mostAtOnce(origin, served)
        #expect(most <= 2, "the origin answered at most 2 requests at once, saw \(most):\n\(when)")
        #expect(most == 2, "and the limit still lets 2 run")
    }

    /// The most requests the origin was answering at one moment, from its own log, and which.
    /// The origin stamps a request finished after its last write returned (or, for a client that
    /// hung up, when its thread notices), a scheduling delay later: on a loaded machine its
    /// Python thread may wait that long for the interpreter while the client has read the whole
    /// body, given its slot back and another worker has started the next request. So the last
    /// `notice` seconds of every request do not count; a body that really overlapped another
    /// would for much longer (the files here take a third of a second or more at the origin's
    /// rate, and a body that kept flowing to a finished segment would for up to a checkpoint).
    static func mostAtOnce(_ origin: FaultOrigin, _ served: [FaultOrigin.Served], notice: Double = 0.05) throws -> (Int, String) {
        var requests: [(path: String, request: FaultOrigin.Request)] = []
        for file in served { requests += try origin.stats(file.path).requests.map { (file.path, $0) } }
        var events: [(time: Double, change: Int)] = []
        for (_, request) in requests {
            events.append((request.time, 1))
            events.append(((request.finished ?? .infinity) - notice, -1))
        }
        events.sort { $0.time == $1.time ? $0.change < $1.change : $0.time < $1.time }
        var open = 0
        var most = 0
        var moment = 0.0
        for event in events {
            open += event.change
            if open > most { (most, moment) = (open, event.time) }
        }
        let busy = requests.filter { $0.request.time <= moment && ($0.request.finished ?? .infinity) > moment }.map {
            "\($0.path) \($0.request.range ?? "-") status \($0.request.status) sent \($0.request.sent) of \($0.request.length) \($0.request.fault ?? "") "
                + String(format: "%.3f–%.3f", $0.request.time - moment, ($0.request.finished ?? .infinity) - moment)
        }
        return (most, busy.joined(separator: "\n"))
    }
}

extension OriginQuirkTests {
    @Test("straggler splits re-fetch next to nothing: the origin sends the file about once")
    func splitTraffic() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // One 72 MiB segment streamed at 8 MiB/s: the three idle connections of `haul get` split
        // it. A split leaves the running worker what two checkpoint intervals and a quarter
        // second bring at its rate plus 1 MiB (19 MiB here) and each piece at least 4 MiB, so it
        // can happen until ~45 MiB have arrived: five seconds, time enough for the rate to be recorded and a lane to look
        // on a loaded machine (with 40 MiB the window was two seconds, and a busy CI run once
        // missed it).
        let served = try origin.create("/split.bin", size: 72 * Self.mib, ["rate": 8 * Self.mib])
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("split-traffic")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let result = try Run.haul(["get", served.url, "-o", work + "/split.bin", "--segment-size", "72MiB", "--quiet"], database: database.url, timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: work + "/split.bin") == served.sha256)
        let stats = try origin.stats(served.path)
        let ratio = Double(stats.bodyBytesSent) / Double(served.size)
        #expect(stats.count >= 2, "the segment was split (\(stats.count) requests)")
        // Bytes in socket buffers when a shrunk request is cut are the only slack.
        #expect(ratio <= 1.03, "the origin sent \(ratio)× the file in \(stats.count) requests")
    }
}

/// The same quirks from a server people really run: RangeHTTPServer (no ETag, If-Range ignored,
/// bare 416 for an empty file).
@Suite("origins: RangeHTTPServer")
struct RangeServerTests {
    @Test("an empty file on RangeHTTPServer (bare 416) is saved empty")
    func emptyFile() throws {
        let server = try RangeServer()
        let url = try server.put("empty.bin", Data())
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("range-empty")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let result = try Run.haul(["get", url, "--max-attempts", "2"], database: database.url, directory: work, timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: work + "/empty.bin")
        #expect((attributes[.size] as? Int) == 0)
    }

    @Test("a file replaced on RangeHTTPServer mid-download (new Last-Modified, no ETag) starts over: never a mixed file")
    func replacedMidDownload() throws {
        let server = try RangeServer()
        let size = 64 << 20
        var bytes = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 4096) { bytes[index] = UInt8(index / 4096 % 251) }
        let old = Data(bytes)
        let new = Data(bytes.map { $0 ^ 0x5A })
        let url = try server.put("moving.bin", old)
        let cluster = try Cluster("range-moving")
        let id = try cluster.enqueue(url, ["--dest", "out.bin", "--segment-size", "1MiB"])
        // Paced (64 MiB take four seconds), so that the pause finds the transfer downloading: at
        // loopback speed it could finish between the poll below and the pause (a CI run did).
        try cluster.startWorker(["--concurrency", "1", "--limit-rate", "16M"])
        // Pause once some segments are done, replace the file (one day later), resume.
        let paused = try Harness.waitUntil(timeout: 30) {
            (Int(try cluster.database.scalar("SELECT count(*) FROM segments WHERE transfer_id = \(id) AND state = 'done'")) ?? 0) >= 2
        }
        #expect(paused)
        let pause = try cluster.haul(["pause", String(id)])
        try #require(pause.status == 0, "the transfer was still running when paused: \(pause.stderr)")
        try server.put("moving.bin", new, modified: Date(timeIntervalSince1970: 1_700_086_400))
        #expect(try cluster.haul(["resume", String(id)]).status == 0)
        #expect(try cluster.waitFinal([id], timeout: 120) == ["done"])
        #expect(cluster.sha256("out.bin") == Origin.sha256(new), "exactly the new version, never a mix of two")
        #expect(try cluster.generation(id) == 1, "the new Last-Modified started the transfer over")
    }
}
