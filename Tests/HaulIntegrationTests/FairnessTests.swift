import Foundation
import HaulTestSupport
import Testing

/// The scheduler is fair: a long segment gives its lane back to work of another transfer that
/// waits with none (`--yield-after`), and the probe of a big file is its first segment.
@Suite("fair lanes")
struct FairnessTests {
    /// The test nginx under another name: another origin host as Haul counts them.
    static var otherOrigin: String { Harness.origin.replacingOccurrences(of: "127.0.0.1", with: "localhost") }

    static func manifest(_ lines: [String]) throws -> String {
        let path = Harness.temporaryDirectory("fair-manifest") + "/list.jsonl"
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("small files of another origin are all done before any segment of a big slow download is")
    func smallBatchBesideBigDownload() throws {
        try smallBatchBeside(from: Self.otherOrigin, cluster: "fair-big")
    }

    @Test("small files of the big slow download's own origin are all done before any of its segments is")
    func smallBatchOfTheSameOrigin() throws {
        try smallBatchBeside(from: Harness.origin, cluster: "fair-own")
    }

    /// A big download through /slow/ holds all 8 lanes of two workers (segments of 32 MiB: 8 s
    /// each), then 40 small files of `origin` are enqueued: every one is done before the first
    /// segment, and every byte is exact.
    func smallBatchBeside(from origin: String, cluster name: String) throws {
        let folder = "fair/" + UUID().uuidString.prefix(8)
        // Through /slow/ (4 MiB/s a connection): 8 segments of 32 MiB, one on each lane of the two workers for seconds.
        let big = try Origin.file("\(folder)/big.bin", size: 256 << 20)
        let small = try (0..<40).map { try Origin.file("\(folder)/s\($0).bin", size: 1000 + $0 * 97) }
        let cluster = try Cluster(name)
        let bigID = try cluster.enqueue(Harness.origin + "/slow" + big.path, ["--dest", "big.bin", "--segment-size", "32MiB"])
        try cluster.startWorker()
        try cluster.startWorker()
        #expect(
            try Harness.waitUntil(timeout: 60) {
                try cluster.database.scalar("SELECT count(*) FROM segments WHERE state = 'running' AND transfer_id = \(bigID)") == "8"
            }, "the big download holds all 8 lanes of the two workers")
        let lines = small.map { #"{"url": "\#(origin)\#($0.path)", "dest": "small/\#($0.path.split(separator: "/").last!)"}"# }
        #expect(try cluster.haul(["enqueue", "--manifest", try Self.manifest(lines), "--batch", "small"]).status == 0)
        var bigSegmentsDone = ""
        #expect(
            try Harness.waitUntil(timeout: 90) {
                let smallDone = try cluster.database.scalar("SELECT count(*) FROM transfers WHERE batch_id IS NOT NULL AND state = 'done'")
                // Read after the count: a segment done now was done no earlier than the last small file.
                bigSegmentsDone = try cluster.database.scalar("SELECT count(*) FROM segments WHERE transfer_id = \(bigID) AND state = 'done'")
                return smallDone == "\(small.count)"
            }, "every small file is done")
        #expect(bigSegmentsDone == "0", "no lane had finished a segment of the big download when the last small file was done")
        #expect(try cluster.waitFinal([bigID], timeout: 120) == ["done"])
        #expect(cluster.sha256("big.bin") == big.sha256, "the big file is exact: its rests given back lost and doubled no byte")
        for file in small { #expect(cluster.sha256("small/" + file.path.split(separator: "/").last!) == file.sha256) }
    }

    @Test("once small files of another origin have a lane, a big download never takes every lane back while some of them wait")
    func bigDownloadLeavesSmallBatchItsLane() throws {
        let folder = "fair/" + UUID().uuidString.prefix(8)
        // Through /slow/ (4 MiB/s a connection) in segments of 8 MiB (the default): a lane of the
        // two workers finishes one every quarter second or so, and the queue offers it the next.
        let big = try Origin.file("\(folder)/big.bin", size: 256 << 20)
        let small = try (0..<100).map { try Origin.file("\(folder)/s\($0).bin", size: 1000 + $0 * 97) }
        let cluster = try Cluster("fair-lanes")
        let bigID = try cluster.enqueue(Harness.origin + "/slow" + big.path, ["--dest", "big.bin"])
        try cluster.startWorker()
        try cluster.startWorker()
        #expect(
            try Harness.waitUntil(timeout: 60) {
                try cluster.database.scalar("SELECT count(*) FROM segments WHERE state = 'running' AND transfer_id = \(bigID)") == "8"
            }, "the big download holds all 8 lanes of the two workers")
        let lines = small.map { #"{"url": "\#(Self.otherOrigin)\#($0.path)", "dest": "small/\#($0.path.split(separator: "/").last!)"}"# }
        #expect(try cluster.haul(["enqueue", "--manifest", try Self.manifest(lines), "--batch", "small"]).status == 0)
        // Each look, one snapshot: the big download's lanes, and the small files waiting unclaimed
        // after the first of them was claimed (a claim leases them; `done` ends it).
        var retaken: [String] = []
        #expect(
            try Harness.waitUntil(timeout: 90) {
                let row = try cluster.database.scalar(
                    """
                    SELECT (SELECT count(*) FROM segments WHERE transfer_id = \(bigID) AND state = 'running') || ' ' ||
                      count(*) FILTER (WHERE state = 'done' OR lease_token IS NOT NULL) || ' ' ||
                      count(*) FILTER (WHERE state = 'pending' AND lease_token IS NULL) FROM transfers WHERE batch_id IS NOT NULL
                    """)
                let counts = row.split(separator: " ").map { Int($0) ?? -1 }
                if counts[0] == 8, counts[1] > 0, counts[2] > 0 { retaken.append(row) }
                guard counts[2] == 0, counts[1] == small.count else { return false }
                return try cluster.database.scalar("SELECT count(*) FROM transfers WHERE batch_id IS NOT NULL AND state = 'done'") == "\(small.count)"
            }, "every small file is done")
        #expect(retaken.isEmpty, "the big download held all 8 lanes while small files it had given way to waited: \(retaken)")
        #expect(try cluster.waitFinal([bigID], timeout: 120) == ["done"])
        #expect(cluster.sha256("big.bin") == big.sha256)
        for file in small { #expect(cluster.sha256("small/" + file.path.split(separator: "/").last!) == file.sha256) }
    }

    @Test("a second big download of one origin is done while the first, which held every lane, still runs")
    func secondBigDownloadOfOneOrigin() throws {
        let folder = "fair/" + UUID().uuidString.prefix(8)
        // Through /slow/ (4 MiB/s a connection) in segments of 8 MiB: 2 s each, longer than the
        // yield budget; the first alone keeps both lanes for about 32 s.
        let first = try Origin.file("\(folder)/first.bin", size: 256 << 20)
        let second = try Origin.file("\(folder)/second.bin", size: 32 << 20)
        let cluster = try Cluster("fair-second")
        let firstID = try cluster.enqueue(Harness.origin + "/slow" + first.path, ["--dest", "first.bin"])
        try cluster.startWorker(["--concurrency", "2"])
        #expect(
            try Harness.waitUntil(timeout: 30) {
                try cluster.database.scalar("SELECT count(*) FROM segments WHERE state = 'running' AND transfer_id = \(firstID)") == "2"
            }, "the first download holds both lanes")
        // In the queue's order the second would be planned once the first's last segment is
        // claimed, and its segments fetched after every one of the first's.
        let secondID = try cluster.enqueue(Harness.origin + "/slow" + second.path, ["--dest", "second.bin"])
        #expect(try cluster.waitFinal([secondID], timeout: 60) == ["done"])
        #expect(cluster.sha256("second.bin") == second.sha256)
        #expect(try cluster.state(firstID) == "downloading", "the first still runs")
        #expect(try cluster.haul(["cancel", String(firstID)]).status == 0)
    }

    @Test("an origin trickling a byte every 0.3 s on both lanes gives one to a healthy origin before its lowest speed")
    func tricklerYieldsToHealthy() throws {
        let trickler = try HostileOrigin()
        let healthy = try Origin.file("fair/\(UUID().uuidString.prefix(8))/healthy.bin", size: 2 << 20)
        let cluster = try Cluster("fair-trickle")
        // Bigger than a probe's first segment: the batch probe hands them to the fetchers' segments.
        let slow = try (0..<2).map { try cluster.enqueue(trickler.base + "/trickle/slow\($0).bin?size=9437184&every=0.3", ["--dest", "slow\($0).bin"]) }
        // Two lanes, the lowest speed at its default (1 KiB/s over 30 s).
        try cluster.startWorker(["--concurrency", "2"])
        #expect(
            try Harness.waitUntil(timeout: 30) {
                try cluster.database.scalar("SELECT count(*) FROM segments WHERE state = 'running'") == "2"
            }, "the trickler holds both lanes")
        let fine = try cluster.enqueue(Self.otherOrigin + healthy.path, ["--dest", "fine.bin"])
        #expect(try cluster.waitFinal([fine], timeout: 60) == ["done"])
        #expect(cluster.sha256("fine.bin") == healthy.sha256)
        #expect(try slow.map { try cluster.state($0) } == ["downloading", "downloading"], "the trickler's transfers still run or wait for a lane")
        let givenUp = try cluster.database.scalar("SELECT count(*) FROM segments WHERE transfer_id IN (\(slow[0]), \(slow[1])) AND last_error IS NOT NULL")
        #expect(givenUp == "0", "the healthy transfer ran before the trickler's lowest speed gave a lane back")
    }

    @Test("transfers of one origin at its limit do not take turns: the first keeps its slot")
    func sameOriginKeepsOrder() throws {
        let trickler = try HostileOrigin()
        let cluster = try Cluster("fair-same")
        let host = "\(trickler.address):\(trickler.port)"
        #expect(try cluster.haul(["host-limit", "set", host, "1"]).status == 0)
        let first = try cluster.enqueue(trickler.base + "/trickle/first.bin?size=100000&every=0.05", ["--dest", "first.bin"])
        try cluster.startWorker(["--concurrency", "2"])
        #expect(
            try Harness.waitUntil(timeout: 30) {
                try cluster.database.scalar("SELECT count(*) FROM segments WHERE state = 'running' AND transfer_id = \(first)") == "1"
            }, "the first transfer runs")
        let second = try cluster.enqueue(trickler.base + "/trickle/second.bin?size=100000&every=0.05", ["--dest", "second.bin"])
        // Past a few yield budgets: the second waits for the origin's only slot, which the first keeps.
        Thread.sleep(forTimeInterval: 4)
        #expect(try cluster.state(second) == "pending", "the second of one origin waits its turn")
        let requests = try trickler.log().filter { $0.path.hasPrefix("/trickle/first.bin") }.count
        #expect(requests == 1, "the first kept its request: \(requests)")
    }

    @Test("the probe of a big file is its first segment: one request per segment, bytes fetched once, under a host limit of 1")
    func probeIsFirstSegment() throws {
        let file = try Origin.file("fair/\(UUID().uuidString.prefix(8))/probe.bin", size: 20 << 20 + 123)
        let cluster = try Cluster("fair-probe")
        let host = String(Harness.origin.dropFirst("http://".count))
        #expect(try cluster.haul(["host-limit", "set", host, "1"]).status == 0)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "probe.bin", "--segment-size", "8MiB"])
        try cluster.startWorker(["--concurrency", "4"])
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(cluster.sha256("probe.bin") == file.sha256)
        let requests = Origin.requests(for: file.path)
        let segments = try cluster.database.scalar("SELECT count(*) FROM segments WHERE transfer_id = \(id)")
        #expect(segments == "3")
        #expect(requests.count == 3, "no separate probe request: \(requests)")
        let sent = requests.compactMap { line in line.split(separator: " ").drop { !$0.hasPrefix("HTTP/") }.dropFirst(2).first.flatMap { Int($0) } }
        #expect(sent.reduce(0, +) == 20 << 20 + 123, "every byte sent once, the probe's body kept as segment 0: \(sent)")
    }
}
