import Foundation
import HaulTestSupport
import Testing

/// Stores that lack conditional writes or checksums answer `501 NotImplemented`: Haul detects it
/// once per store and goes on without them (moto behind a proxy that refuses those headers).
@Suite("S3 storage: stores without conditional writes or checksums")
struct S3NotImplementedTests {
    @Test("small files, a checksummed one and a multipart one are all stored; each missing feature is logged once")
    func fallsBack() throws {
        let moto = try MotoS3(notImplemented: true)
        let bucket = try S3Bucket("no501", endpoint: moto.endpoint)
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let small = try (0..<6).map { try origin.create("/n/small\($0).bin", size: 100_000 + $0) }
        let summed = try origin.create("/n/summed.bin", size: 200_000)
        let big = try origin.create("/n/big.bin", size: 12 * Reliability.mebibyte)
        let cluster = try Cluster("s3-no501")
        var ids = try small.map { try cluster.enqueue($0.url) }
        ids.append(try cluster.enqueue(summed.url, ["--checksum", "sha256:" + summed.versions[0].sha256]))
        ids.append(try cluster.enqueue(big.url, ["--segment-size", "6MiB"]))
        let worker = try cluster.startWorker(["--concurrency", "2"], environment: bucket.storeEnvironment, storage: "s3://\(bucket.name)/pre")
        #expect(try cluster.waitFinal(ids, timeout: 120) == Array(repeating: "done", count: ids.count))
        for served in small + [summed, big] {
            #expect(try bucket.object("pre" + served.path.dropFirst(2))?.sha256 == served.versions[0].sha256, "\(served.path)")
        }
        let log = worker.stdout + worker.stderr
        let found = log.split(separator: "\n").filter { $0.contains("Haul goes on without them") }
        #expect(found.count == 2, "\(log)")
        #expect(found.contains { $0.contains("does not implement conditional writes") } && found.contains { $0.contains("does not implement checksums") })
        // Found out once per store: only the requests in flight at that moment were refused.
        #expect(try moto.refused() <= 4)
    }
}
