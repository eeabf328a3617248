import Foundation
import HaulTestSupport
import Testing

/// Whatever the origin does wrong, a transfer ends with exactly the right bytes or a
/// clear failure, never a corrupt or mixed file, and downloaded work is not thrown away.
/// Every test has its own fault origin (Faults/origin.py), database and storage.
@Suite("reliability: origin faults")
struct OriginFaultTests {
    static let mib = Reliability.mebibyte

    /// A fresh cluster with `served` enqueued as `out.bin` and one worker started.
    static func start(
        _ label: String, _ served: FaultOrigin.Served, segment: String = "1MiB", enqueue: [String] = [], worker: [String] = []
    ) throws -> (cluster: Cluster, id: Int64, worker: Child) {
        let cluster = try Cluster(label)
        let id = try cluster.enqueue(served.url, ["--dest", "out.bin", "--segment-size", segment] + enqueue)
        let child = try cluster.startWorker(worker)
        return (cluster, id, child)
    }

    // MARK: broken bodies

    @Test("a connection reset mid-body is retried and resumes where it broke", arguments: ["inplace", "parts"])
    func resetMidBody(layout: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // Four whole 1 MiB segments: whichever of the three after the probe reaches the origin
        // first is reset at 300 000 bytes (a short tail segment, were it first, would end before
        // the reset point and be reset with nothing of it received).
        let served = try origin.create("/reset-\(layout).bin", size: 4 * Self.mib, ["reset_at": 300_000, "reset_after": 1, "reset_times": 1])
        let (cluster, id, _) = try Self.start("reset-\(layout)", served, enqueue: ["--layout", layout])
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(cluster.sha256("out.bin") == served.sha256)
        let stats = try origin.stats(served.path)
        #expect(stats.count == 4 + 1, "four segments and one retry, no retry storm: \(stats.requests.map { "\($0.range ?? "-") \($0.fault ?? "")" })")
        let reset = try #require(stats.requests.first { $0.fault == "reset" })
        let retry = try #require(stats.requests.first { $0.number > reset.number && $0.end == reset.end }, "the reset segment is requested again")
        let resetStart = try #require(reset.start)
        let retryStart = try #require(retry.start)
        #expect(retryStart > resetStart, "the retry resumes after the bytes already received (\(resetStart) → \(retryStart))")
        #expect(retryStart <= resetStart + 300_000, "and never skips bytes it did not receive")
        let etag = served.versions[0].etag
        #expect(stats.requests.filter { $0.number > 1 }.allSatisfy { $0.ifRange == etag }, "every range request after planning carries If-Range: \(etag)")
        #expect(cluster.temporaries().isEmpty, "no partial file or parts are left: \(cluster.temporaries())")
    }

    @Test("a body shorter than announced is retried until complete")
    func shortBody() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/short.bin", size: 3 * Self.mib, ["short_at": 200_000, "short_after": 1, "short_times": 2])
        let (cluster, id, _) = try Self.start("short", served)
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(cluster.sha256("out.bin") == served.sha256)
        let stats = try origin.stats(served.path)
        #expect(stats.count == 3 + 2, "three segments, two short bodies, nothing more: \(stats.requests.map { $0.range ?? "-" })")
        for short in stats.requests where short.fault == "short" {
            let again = stats.requests.first { $0.number > short.number && $0.end == short.end }
            #expect(again?.start ?? -1 > short.start ?? 0, "the bytes of a short body are kept and the retry resumes after them")
        }
    }

    @Test("a stalled origin is abandoned after --stall-timeout and the segment is retried")
    func stall() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // Three whole 1 MiB segments: whichever of the two after the probe comes first stalls
        // at 100 000 bytes (a shorter tail segment would end before the stall point).
        let served = try origin.create("/stall.bin", size: 3 * Self.mib, ["stall_at": 100_000, "stall_after": 1, "stall_times": 1, "stall_secs": 120])
        let (cluster, id, _) = try Self.start("stall", served, worker: ["--stall-timeout", "2s"])
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.sha256)
        let stats = try origin.stats(served.path)
        #expect(stats.count == 3 + 1, "\(stats.requests.map { $0.range ?? "-" })")
        let stalled = try #require(stats.requests.first { $0.fault == "stall" })
        #expect(stalled.finished != nil, "haul hung up on the stalled response")
        let again = stats.requests.first { $0.number > stalled.number && $0.end == stalled.end }
        #expect(again?.start ?? -1 > stalled.start ?? 0, "the stalled segment resumes after the bytes it had")
    }

    // MARK: transient statuses

    @Test("408, 429 and 5xx are retried with exponential backoff, then succeed", arguments: [408, 429, 500, 502])
    func transientStatus(code: Int) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // Two segments and one fetcher: the probe is segment 0, then segment 1 gets `code` three times.
        let served = try origin.create("/status-\(code).bin", size: 2 * Self.mib, ["status": code, "status_after": 1, "status_times": 3])
        let (cluster, id, _) = try Self.start("status-\(code)", served, worker: ["--concurrency", "1"])
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.sha256)
        let stats = try origin.stats(served.path)
        #expect(stats.count == 2 + 3, "exactly three retries, no storm: \(stats.requests.map { "\($0.status)" })")
        let segment1 = stats.requests.filter { $0.number > 1 }.sorted { $0.time < $1.time }
        // Backoff starts at 1 s and doubles, spread over 50–100 %: gaps of at least 0.5, 1 and 2 seconds.
        for (index, minimum) in [0.5, 1.0, 2.0].enumerated() where index + 1 < segment1.count {
            let gap = segment1[index + 1].time - (segment1[index].finished ?? segment1[index].time)
            #expect(gap >= minimum * 0.95, "retry \(index + 1) came \(gap)s after the failure; backoff promises at least \(minimum)s")
        }
    }

    @Test("503 with Retry-After waits at least that long before retrying")
    func retryAfter() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/retry-after.bin", size: 2 * Self.mib, ["status": 503, "status_after": 1, "status_times": 2, "retry_after": 3])
        let (cluster, id, _) = try Self.start("retry-after", served, worker: ["--concurrency", "1"])
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.sha256)
        let stats = try origin.stats(served.path)
        #expect(stats.count == 2 + 2, "\(stats.requests.map { "\($0.status)" })")
        let later = stats.requests.filter { $0.number > 1 }.sorted { $0.time < $1.time }
        for index in 0..<min(2, later.count - 1) {
            let gap = later[index + 1].time - (later[index].finished ?? later[index].time)
            #expect(gap >= 2.9, "Retry-After: 3 was honoured (retry came after \(gap)s)")
        }
    }

    @Test("--max-attempts bounds retries; the failure names the status and the attempts", arguments: ["enqueue", "worker"])
    func maxAttempts(where flag: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/max-\(flag).bin", size: 2 * Self.mib, ["status": 503, "status_after": 1])
        let (cluster, id, _) = try Self.start(
            "max-\(flag)", served, enqueue: flag == "enqueue" ? ["--max-attempts", "3"] : [],
            worker: ["--concurrency", "1"] + (flag == "worker" ? ["--max-attempts", "3"] : []))
        #expect(try cluster.waitFinal([id], timeout: 60) == ["failed"])
        let error = try cluster.error(id)
        #expect(error.contains("503") && error.contains("3 attempts") && !error.contains("will be retried"), "\(error)")
        let stats = try origin.stats(served.path)
        #expect(stats.count == 1 + 3, "the probe and three attempts at segment 1, no more: \(stats.count)")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/out.bin"))
    }

    // MARK: permanent statuses

    static let permanent: [(Int, Int)] = [(401, 0), (403, 1), (404, 0), (410, 1)]

    @Test("401/403/404/410 fail the transfer at once, naming the status", arguments: permanent)
    func permanentStatus(code: Int, after: Int) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/perm-\(code).bin", size: 3 * Self.mib, ["status": code, "status_after": after])
        let (cluster, id, _) = try Self.start("perm-\(code)", served)
        #expect(try cluster.waitFinal([id], timeout: 30) == ["failed"])
        let error = try cluster.error(id)
        #expect(error.contains("\(code)"), "the origin's status is in the reason: \(error)")
        let stats = try origin.stats(served.path)
        let refused = stats.requests.filter { $0.status == code }
        #expect(!refused.isEmpty)
        let retried = Dictionary(grouping: refused, by: { $0.range ?? "" }).filter { $0.value.count > 1 }
        #expect(retried.isEmpty, "a permanent status is never retried: \(retried.keys)")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/out.bin"))
    }

    // MARK: origin changed

    @Test("a replaced file (new ETag, same size) starts the transfer over and arrives whole, new version only", arguments: ["inplace", "parts"])
    func replacedSameSize(layout: String) throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/replace-\(layout).bin", size: 4 * Self.mib, ["replace_after": 1])
        let (cluster, id, _) = try Self.start("replace-\(layout)", served, enqueue: ["--layout", layout])
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.versions[1].sha256, "exactly the new version, never a mix")
        #expect(try cluster.generation(id) == 1, "the transfer started over once")
        #expect(try cluster.status(id)["size"] as? Int == served.versions[1].size)
        #expect(cluster.temporaries().isEmpty, "the old generation's data is gone: \(cluster.temporaries())")
    }

    @Test("a replaced file of another size starts over and arrives whole at its new size")
    func replacedNewSize() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/replace-size.bin", size: 4 * Self.mib, ["replace_after": 1, "replace_size": 5 * Self.mib + 4321])
        let (cluster, id, _) = try Self.start("replace-size", served)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.versions[1].sha256)
        #expect(try cluster.status(id)["size"] as? Int == 5 * Self.mib + 4321)
    }

    @Test("a new total size under the same ETag is noticed: start over, name the sizes")
    func resizedSameETag() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/resize.bin", size: 4 * Self.mib, ["resize_after": 1, "resize_size": 4 * Self.mib + 777])
        let (cluster, id, worker) = try Self.start("resize", served)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("out.bin") == served.versions[1].sha256)
        #expect(try cluster.generation(id) == 1)
        #expect(!Reliability.logLines(worker, containing: "origin changed", "size").isEmpty, "the worker log says the size changed:\n\(worker.stderr)")
    }

    @Test("a file that keeps changing fails after one restart with 'origin changed while downloading' and the detail")
    func keepsChanging() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/changing.bin", size: 4 * Self.mib, ["replace_every": 2])
        let (cluster, id, _) = try Self.start("changing", served)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["failed"])
        let error = try cluster.error(id)
        #expect(error.contains("origin changed while downloading") && error.contains("ETag") && error.contains("haul retry"), "\(error)")
        #expect(try cluster.generation(id) == 1, "started over exactly once")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/out.bin"), "nothing is published")
    }

    @Test("a Content-Range other than the one asked for, of the same version: retried, then failed naming both ranges")
    func shiftedContentRange() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/shift.bin", size: 3 * Self.mib, ["shift": 1])
        let (cluster, id, _) = try Self.start("shift", served, enqueue: ["--max-attempts", "3"])
        #expect(try cluster.waitFinal([id], timeout: 60) == ["failed"])
        let error = try cluster.error(id)
        #expect(error.contains("asked for bytes") && error.contains("gave up after 3 attempts") && !error.contains("will be retried"), "\(error)")
        #expect(try cluster.generation(id) == 0, "a faulty answer is not a new version: no start over")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/out.bin"))
    }

    @Test("an origin that stops honouring Range after planning: start over, and the bytes are right")
    func stopsHonouringRange() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/norange.bin", size: 3 * Self.mib + 5, ["norange_after": 1])
        let (cluster, id, _) = try Self.start("norange-after", served)
        let final = try cluster.waitFinal([id], timeout: 60)
        #expect(try cluster.generation(id) == 1, "a 200 to a range request starts the transfer over")
        if final == ["done"] {
            #expect(cluster.sha256("out.bin") == served.sha256)
        } else {
            let error = try cluster.error(id)
            #expect(final == ["failed"] && error.contains("origin changed while downloading") && error.contains("200"), "\(final) \(error)")
            #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/out.bin"))
        }
    }
}
