import Foundation
import HaulTestSupport
import Testing

/// Objects are stored with the origin's `Content-Type`, else `application/octet-stream`, on
/// SeaweedFS and on moto (which keeps what a `CreateMultipartUpload` was sent, as AWS does).
@Suite("S3 storage: content types")
struct S3ContentTypeTests {
    static let mib = Reliability.mebibyte

    @Test("single PUT, multipart and empty objects keep the origin's Content-Type, else application/octet-stream", arguments: ["SeaweedFS", "moto"])
    func contentTypes(store: String) throws {
        let moto = store == "moto" ? try MotoS3() : nil
        let bucket = try S3Bucket("type", endpoint: moto?.endpoint)
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let files = [
            ("small.mp4", try origin.create("/t/small.mp4", size: 100_000, ["type": "video/mp4"]), "video/mp4"),
            ("big.mp4", try origin.create("/t/big.mp4", size: 12 * Self.mib, ["type": "video/mp4"]), "video/mp4"),
            ("plain.bin", try origin.create("/t/plain.bin", size: 12 * Self.mib, ["type": "none"]), "application/octet-stream"),
            ("small.txt", try origin.create("/t/small.txt", size: 1000, ["type": "text/plain;%20charset=utf-8"]), "text/plain; charset=utf-8"),
            // Its probe's answer is a 416, whose type (text/html) is its error page's.
            ("empty.bin", try origin.create("/t/empty.bin", size: 0), "application/octet-stream"),
        ]
        let cluster = try Cluster("s3-type")
        let ids = try files.map { try cluster.enqueue($0.1.url, ["--segment-size", "6MiB"]) }
        try cluster.startWorker(["--concurrency", "4"], environment: bucket.storeEnvironment, storage: "s3://\(bucket.name)/pre")
        #expect(try cluster.waitFinal(ids, timeout: 120) == Array(repeating: "done", count: files.count))
        for (name, served, type) in files {
            #expect(try bucket.contentType("pre/\(name)") == type, "\(name) on \(store)")
            #expect(try bucket.object("pre/\(name)")?.sha256 == served.versions[0].sha256, "\(name) on \(store)")
        }
        #expect(try bucket.openUploads().isEmpty)
    }
}
