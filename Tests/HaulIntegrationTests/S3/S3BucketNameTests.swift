import Foundation
import HaulTestSupport
import Testing

/// Bucket names today's AWS rules refuse but older AWS buckets and Google Cloud Storage have.
@Suite("S3 storage: bucket names")
struct S3BucketNameTests {
    @Test("a worker stores into a bucket named with upper case, underscores and dots (moto)")
    func legacyNames() throws {
        let moto = try MotoS3()
        let bucket = try S3Bucket("Old_Style.Name", endpoint: moto.endpoint)
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let small = try origin.create("/n/small.bin", size: 100_000)
        let big = try origin.create("/n/big.bin", size: 12 * Reliability.mebibyte)
        let cluster = try Cluster("s3-names")
        let ids = try [small, big].map { try cluster.enqueue($0.url, ["--segment-size", "6MiB"]) }
        try cluster.startWorker([], environment: bucket.storeEnvironment, storage: "s3://\(bucket.name)/pre")
        #expect(try cluster.waitFinal(ids, timeout: 120) == ["done", "done"])
        #expect(try bucket.object("pre/small.bin")?.sha256 == small.versions[0].sha256)
        #expect(try bucket.object("pre/big.bin")?.sha256 == big.versions[0].sha256)
        #expect(try bucket.openUploads().isEmpty)
    }
}
