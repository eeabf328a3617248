import Foundation
import HaulTestSupport
import Testing

/// `--force` with a wrong `--checksum` into s3://: the transfer fails and the object that was
/// there stays byte for byte, as a file on a folder does.
@Suite("S3 storage: a forced get with a wrong checksum")
struct S3ForceChecksumTests {
    static let mib = 1_048_576

    @Test("a small and a multipart file with a wrong sha256 leave the object they were to replace as it was (SeaweedFS, and moto without checksums)")
    func keepsTheOldObject() throws {
        let moto = try MotoS3(notImplemented: true)
        for bucket in [try S3Bucket("forcesum"), try S3Bucket("forcesum501", endpoint: moto.endpoint)] {
            let database = try TestDatabase()
            let origin = try FaultOrigin()
            defer { withExtendedLifetime(origin) {} }
            for (name, size) in [("small.bin", 300_007), ("big.bin", 12 * Self.mib)] {
                let file = try origin.create("/force/\(name)", size: size)
                try bucket.put("k/\(name)", "the object that was there\n")
                let before = try bucket.object("k/\(name)")
                let wrong = try Run.haul(
                    [
                        "get", "-q", file.url, "-o", "s3://\(bucket.name)/k/\(name)", "--force", "--segment-size", "6MiB", "--checksum",
                        "sha256:" + String(repeating: "1", count: 64),
                    ], database: database.url, environment: bucket.storeEnvironment)
                #expect(wrong.status == 10, "\(bucket.endpoint) \(name): \(wrong.stderr)")
                #expect(wrong.stderr.contains("checksum mismatch"), "\(wrong.stderr)")
                let after = try bucket.object("k/\(name)")
                #expect(after?.sha256 == before?.sha256 && after?.size == before?.size, "\(bucket.endpoint) \(name): the old object stays")
                let keys = try bucket.keys("k/")
                #expect(keys.allSatisfy { !$0.contains("haul-kept") }, "no copy is left: \(keys)")
                #expect(try bucket.openUploads().isEmpty)
            }
        }
    }
}
