import Foundation
import HaulTestSupport
import Testing

/// On S3 storage a file goes to the bucket: the worker's local scratch folder bounds only what
/// it spools there (a zip to extract), never what it plans.
@Suite("S3 storage: local scratch space")
struct S3ScratchSpaceTests {
    @Test(
        "a worker whose scratch folder is an 8 MiB tmpfs stores a 64 MiB file in the bucket",
        .enabled(if: getuid() == 0, "mounts a tmpfs (root only)"))
    func scratchSmallerThanFile() throws {
        let bucket = try S3Bucket("scratch")
        let scratch = Harness.temporaryDirectory("s3-scratch")
        try #require(try Run.program("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", scratch]).status == 0)
        defer { _ = try? Run.program("/bin/umount", ["-l", scratch]) }
        let file = try Origin.file("s3scratch/\(UUID().uuidString.prefix(8))/big.bin", size: 64 * Reliability.mebibyte)
        let cluster = try Cluster("s3-scratch")
        try cluster.startWorker([], environment: S3Bucket.environment.merging(["TMPDIR": scratch]) { $1 }, storage: "s3://\(bucket.name)/pre")
        let id = try cluster.enqueue(Harness.origin + file.path)
        let final = try cluster.waitFinal([id], timeout: 120)
        let status = try cluster.status(id)
        #expect(final == ["done"], "\(status)")
        #expect(try bucket.object("pre/big.bin")?.sha256 == file.sha256)
    }
}
