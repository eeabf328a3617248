import Foundation
import HaulTestSupport
import Testing

/// A bucket shared with other hosts, fleets and tools: Haul's sweep aborts only the uploads it
/// can tell for its own, and a killed `haul get` leaves nothing open for good.
@Suite("S3 storage: a shared bucket")
struct S3SharedBucketTests {
    static let mib = 1_048_576

    @Test("haul get's sweep aborts the upload of a killed get canceled since, and leaves another tool's upload under the prefix")
    func sweepsOnlyItsOwn() throws {
        let bucket = try S3Bucket("shared")
        let database = try TestDatabase()
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        // Another client's upload under the same prefix (aws-cli, rclone, another host's get).
        try bucket.startUpload("dir/foreign.bin")
        let slow = try origin.create("/shared/slow.bin", size: 12 * Self.mib, ["rate": 500_000])
        let environment = S3Bucket.environment.merging(["DATABASE_URL": database.url, "HAUL_S3_ORPHAN_GRACE": "1s"]) { $1 }
        let killed = try Child(
            Harness.haulBinary, ["get", "-q", slow.url, "-o", "s3://\(bucket.name)/dir/slow.bin", "--segment-size", "6MiB"], environment: environment)
        defer { killed.signal(SIGKILL) }
        let opened = Harness.waitUntil(timeout: 60) {
            (try? database.scalar("SELECT count(*) FROM transfers WHERE object_upload_id IS NOT NULL")) == "1"
        }
        try #require(opened, "the get opened its upload: \(killed.stderr)")
        killed.signal(SIGKILL)
        _ = killed.wait(timeout: 10)
        let id = try database.scalar("SELECT id FROM transfers")
        let cancel = try Run.haul(["cancel", id], database: database.url)
        #expect(cancel.status == 0, "\(cancel.stderr)")
        #expect(try bucket.openUploads().sorted() == ["dir/foreign.bin", "dir/slow.bin"])
        Thread.sleep(forTimeInterval: 2)
        let small = try origin.create("/shared/small.bin", size: 100_000)
        let next = try Run.haul(["get", "-q", small.url, "-o", "s3://\(bucket.name)/dir/small.bin"], database: database.url, environment: environment)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(try bucket.openUploads() == ["dir/foreign.bin"], "the canceled get's upload is aborted, the foreign one past the grace is not")
        #expect(try database.scalar("SELECT count(*) FROM transfers WHERE object_upload_id IS NOT NULL") == "0")
    }
}
