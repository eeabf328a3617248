import HaulQueue
import Testing

/// The sweep aborts only uploads the database can tell for Haul's own.
@Suite("S3 sweep: which open uploads are Haul's to abort")
struct UploadVerdictTests {
    static let now = 1_800_000_000.0
    static let grace = 3600.0

    static var known: UploadKnowledge {
        var known = UploadKnowledge()
        known.live = ["live-id"]
        known.stopped = ["stopped-id": 42]
        known.begun = ["dir/a.bin": [now - 7200]]
        return known
    }

    @Test("a live transfer's upload is kept however old; a stopped transfer's is aborted at once")
    func recorded() {
        #expect(Self.known.verdict(key: "dir/a.bin", uploadID: "live-id", initiated: Self.now - 86400, now: Self.now, grace: Self.grace) == .keep)
        #expect(Self.known.verdict(key: "dir/x.bin", uploadID: "stopped-id", initiated: Self.now - 1, now: Self.now, grace: Self.grace) == .abortStopped(42))
    }

    @Test("an unrecorded upload is aborted only at a key Haul announced, begun near the announcement and past the grace")
    func announced() {
        let known = Self.known
        // Opened a few seconds after the intent (the store's clock a little off): Haul's.
        #expect(known.verdict(key: "dir/a.bin", uploadID: "u1", initiated: Self.now - 7195, now: Self.now, grace: Self.grace) == .abortOrphan)
        #expect(known.verdict(key: "dir/a.bin", uploadID: "u1", initiated: Self.now - 7230, now: Self.now, grace: Self.grace) == .abortOrphan)
        // Same key, but begun an hour after the intent: someone else's.
        #expect(known.verdict(key: "dir/a.bin", uploadID: "u2", initiated: Self.now - 3700, now: Self.now, grace: Self.grace) == .keep)
        // Another key under the prefix (another host's get, aws-cli, rclone): never.
        #expect(known.verdict(key: "dir/b.bin", uploadID: "u3", initiated: Self.now - 86400, now: Self.now, grace: Self.grace) == .keep)
        // Haul's, but within the grace, or with no date the sweep could read: kept.
        var young = known
        young.begun = ["dir/a.bin": [Self.now - 60]]
        #expect(young.verdict(key: "dir/a.bin", uploadID: "u4", initiated: Self.now - 59, now: Self.now, grace: Self.grace) == .keep)
        #expect(known.verdict(key: "dir/a.bin", uploadID: "u5", initiated: nil, now: Self.now, grace: Self.grace) == .keep)
    }
}
