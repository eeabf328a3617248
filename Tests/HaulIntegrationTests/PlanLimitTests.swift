import Foundation
import HaulTestSupport
import Testing

/// An origin cannot crash a worker or loop the fleet with what it announces.
@Suite("security: plan limits")
struct PlanLimitTests {
    /// `haul ARGS` under an address-space limit, so that a regression that tries to plan
    /// 2^63-1 bytes fails fast instead of eating the machine.
    static func limited(_ arguments: [String], database: String?, directory: String? = nil) throws -> Run.Result {
        var environment: [String: String] = [:]
        if let database { environment["DATABASE_URL"] = database }
        return try Run.program("/usr/bin/prlimit", ["--as=\(3 << 30)", "--", Harness.haulBinary] + arguments, environment: environment, directory: directory)
    }

    @Test("an origin announcing 2^63-1 bytes fails the transfer with a reason; nothing is written")
    func hugeAnnouncement() throws {
        let origin = try HostileOrigin()
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("huge")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let result = try Self.limited(["get", origin.base + "/huge", "-o", work + "/huge.bin", "--segment-size", "64KiB"], database: database.url)
        #expect(result.status == 1, "exit \(result.status): \(result.stderr)")
        #expect(result.stderr.contains("9223372036854775807 bytes"), "\(result.stderr)")
        #expect(result.stderr.contains("more than the whole storage holds"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty, "nothing written")
    }

    @Test("a worker under a memory limit fails the poisoned row and keeps working")
    func workerSurvives() throws {
        let origin = try HostileOrigin()
        let cluster = try Cluster("huge-worker")
        let huge = try cluster.enqueue(origin.base + "/huge", ["--dest", "huge.bin"])
        let capped = try cluster.enqueue(origin.base + "/file/capped?size=3000000", ["--dest", "capped.bin", "--max-file-size", "1MiB"])
        let fine = try cluster.enqueue(origin.base + "/file/fine?size=300000", ["--dest", "fine.bin"])
        let worker = try Child(
            "/usr/bin/prlimit", ["--as=\(3 << 30)", "--", Harness.haulBinary, "worker", "--storage", cluster.storage, "--poll-interval", "200ms"],
            environment: ["DATABASE_URL": cluster.database.url])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 15)
        }
        #expect(try cluster.waitFinal([huge, capped, fine]) == ["failed", "failed", "done"])
        #expect(worker.isRunning, "the worker survived: \(worker.stderr)")
        #expect(try cluster.database.scalar("SELECT error_code FROM transfers WHERE id = \(huge)") == "too-large")
        // The probe's own response announces more than the limit: libcurl refuses it at its head.
        #expect(try cluster.database.scalar("SELECT error_code FROM transfers WHERE id = \(capped)") == "too-large")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/huge.bin"))
    }

    @Test("a body of unknown length stops at --max-file-size")
    func endlessBody() throws {
        let origin = try HostileOrigin()
        let cluster = try Cluster("endless")
        let id = try cluster.enqueue(origin.base + "/endless", ["--dest", "endless.bin", "--max-file-size", "1MiB"])
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id]) == ["failed"])
        #expect(try cluster.database.scalar("SELECT error_code FROM transfers WHERE id = \(id)") == "too-large")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/endless.bin"))
    }

    @Test("a response head of 1 MiB is cut off at 256 KiB with a reason")
    func hugeHead() throws {
        let origin = try HostileOrigin()
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("bighead")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let result = try Self.limited(["get", origin.base + "/bighead", "-o", work + "/h.bin", "--max-attempts", "1"], database: database.url)
        #expect(result.status == 7, "exit \(result.status): \(result.stderr)")
        #expect(result.stderr.contains("more than 256 KiB of response headers"), "\(result.stderr)")
    }

    @Test("a row whose planning was started more often than its attempts (workers died on it) is failed, not claimed again")
    func abandonedPlanning() throws {
        let origin = try HostileOrigin()
        let cluster = try Cluster("abandoned")
        let id = try cluster.enqueue(origin.base + "/file/a?size=1000", ["--dest", "a.bin", "--max-attempts", "2"])
        // What two planners killed mid-probe leave behind: two claims counted, no outcome recorded.
        _ = try cluster.database.scalar("UPDATE transfers SET attempts = 2 WHERE id = \(id) RETURNING id")
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id]) == ["failed"])
        #expect(try cluster.database.scalar("SELECT error_code FROM transfers WHERE id = \(id)") == "abandoned")
        let reason = try cluster.database.scalar("SELECT error FROM transfers WHERE id = \(id)")
        #expect(reason.contains("planning of transfer \(id) was started 2 times without finishing"), "\(reason)")
        #expect(try origin.log().isEmpty, "the origin was not asked again")
    }

    @Test("a row whose finalizing was started more often than its attempts is failed too")
    func abandonedFinalizing() throws {
        let origin = try HostileOrigin()
        let cluster = try Cluster("abandoned-final")
        let id = try cluster.enqueue(origin.base + "/file/f?size=200000", ["--dest", "f.bin", "--max-attempts", "2", "--segment-size", "64KiB"])
        let fetchers = try cluster.startWorker(["--roles", "planner,fetcher"])
        try #require(try Harness.waitUntil(timeout: 60) { try cluster.state(id) == "finalizing" })
        fetchers.signal(SIGTERM)
        _ = fetchers.wait(timeout: 15)
        _ = try cluster.database.scalar("UPDATE transfers SET attempts = 2 WHERE id = \(id) RETURNING id")
        try cluster.startWorker(["--roles", "finalizer"])
        #expect(try cluster.waitFinal([id]) == ["failed"])
        #expect(try cluster.database.scalar("SELECT error_code FROM transfers WHERE id = \(id)") == "abandoned")
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/f.bin"), "not published")
    }

    @Test("--segment-size below 64KiB is refused with exit 2 and no row")
    func segmentFloor() throws {
        let database = try TestDatabase()
        let result = try Run.haul(["enqueue", "http://h.example/x", "--dest", "x", "--segment-size", "4KiB"], database: database.url)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("haul: --segment-size 4096 is below the minimum of 64KiB"), "\(result.stderr)")
    }
}
