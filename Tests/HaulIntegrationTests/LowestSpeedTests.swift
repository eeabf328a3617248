import Foundation
import HaulTestSupport
import Testing

/// `--lowest-speed`: an origin that trickles is given back its lane, and fails in the end.
@Suite("lowest speed")
struct LowestSpeedTests {
    @Test("a trickling origin's transfer fails naming the rate; a healthy one on the only lane completes")
    func tricklerGivenBack() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // 300 bytes per second, far under the 1 KiB/s the rule asks for.
        let trickle = try origin.create("/trickle.bin", size: 256 << 10, ["rate": 300])
        let healthy = try Origin.file("lowest/\(UUID().uuidString.prefix(8)).bin", size: 2 << 20)
        let cluster = try Cluster("lowest-speed")
        let slow = try cluster.enqueue(trickle.url, ["--dest", "slow.bin", "--segment-size", "64KiB"])
        let fine = try cluster.enqueue(Harness.origin + healthy.path, ["--dest", "fine.bin", "--priority", "-1"])
        try cluster.startWorker(["--concurrency", "1", "--lowest-speed", "1KiB", "--lowest-speed-time", "2s", "--max-attempts", "2"])
        #expect(try cluster.waitFinal([slow, fine], timeout: 120) == ["failed", "done"])
        #expect(cluster.sha256("fine.bin") == healthy.sha256, "the healthy transfer got the lane and all its bytes")
        let status = try cluster.status(slow)
        let error = status["error"] as? String ?? ""
        #expect(error.contains("sent under 1.0 KiB/s for 2 s") && error.contains("2 attempts"), "\(error)")
        #expect(status["error_code"] as? String == "too-slow", "\(status)")
        let kept = try cluster.database.scalar("SELECT coalesce(sum(bytes_done), 0) FROM segments WHERE transfer_id = \(slow)")
        #expect((Int(kept) ?? 0) > 0, "the bytes it trickled are kept: \(kept)")
        #expect(!error.contains("CURL") && !error.contains("Operation too slow"), "no libcurl words: \(error)")
    }

    @Test("a transfer's own --lowest-speed wins over its worker's defaults: too-slow after its attempts")
    func perTransferRule() throws {
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let trickle = try origin.create("/own-trickle.bin", size: 256 << 10, ["rate": 300])
        let cluster = try Cluster("lowest-speed-own")
        let slow = try cluster.enqueue(
            trickle.url, ["--dest", "slow.bin", "--segment-size", "64KiB", "--lowest-speed", "1KiB", "--lowest-speed-time", "2s", "--max-attempts", "2"])
        // The worker's own rule is its default, 1 KiB/s over 30 s.
        try cluster.startWorker()
        #expect(try cluster.waitFinal([slow], timeout: 120) == ["failed"])
        let status = try cluster.status(slow)
        let error = status["error"] as? String ?? ""
        #expect(status["error_code"] as? String == "too-slow", "\(status)")
        #expect(error.contains("sent under 1.0 KiB/s for 2 s") && error.contains("2 attempts"), "the transfer's own figures: \(error)")
    }
}
