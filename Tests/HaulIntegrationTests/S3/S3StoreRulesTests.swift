import Foundation
import HaulTestSupport
import Testing

/// What buckets ask of a writer beyond the basics, against moto (which answers as AWS does):
/// Object Lock retention, keys limited to a prefix, someone else's object at an upload target.
@Suite("S3 storage: bucket rules")
struct S3StoreRulesTests {
    static let mib = 1_048_576

    @Test("a small file, an empty one and a multipart one are stored in a bucket with Object Lock retention")
    func objectLock() throws {
        let moto = try MotoS3()
        let bucket = try S3Bucket("locked", endpoint: moto.endpoint, objectLock: true)
        let database = try TestDatabase()
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let files = [try origin.create("/lock/small.bin", size: 100_003), try origin.create("/lock/big.bin", size: 7 * Self.mib)]
        for file in files {
            let name = String(file.path.dropFirst(6))
            let get = try Run.haul(
                ["get", "-q", file.url, "-o", "s3://\(bucket.name)/l/\(name)"], database: database.url, environment: bucket.storeEnvironment)
            #expect(get.status == 0, "\(name): \(get.stderr)")
            let stored = try bucket.object("l/" + name)
            #expect(stored?.sha256 == file.sha256, "\(name): \(String(describing: stored)) \(get.stderr)")
        }
        let empty = try origin.create("/lock/empty.bin", size: 0)
        let get = try Run.haul(["get", "-q", empty.url, "-o", "s3://\(bucket.name)/l/empty.bin"], database: database.url, environment: bucket.storeEnvironment)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(try bucket.object("l/empty.bin")?.size == 0)
    }

    @Test("haul get checks the bucket with a listing under its prefix, never of the whole bucket (keys limited to a prefix work)")
    func leastPrivilege() throws {
        let moto = try MotoS3(recording: true)
        let bucket = try S3Bucket("prefix", endpoint: moto.endpoint)
        let database = try TestDatabase()
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let file = try origin.create("/prefix/a.bin", size: 6 * Self.mib)
        let before = try moto.requests().count
        let get = try Run.haul(["get", "-q", file.url, "-o", "s3://\(bucket.name)/dir/a.bin"], database: database.url, environment: bucket.storeEnvironment)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(try bucket.object("dir/a.bin")?.sha256 == file.sha256)
        let requests = Array(try moto.requests().dropFirst(before))
        // Requests on the bucket itself (no key): each one a listing within dir/.
        let onBucket = requests.filter { line in
            let path = line.split(separator: " ").last.map { String($0.split(separator: "?", maxSplits: 1)[0]) } ?? ""
            return path == "/\(bucket.name)" || path == "/\(bucket.name)/"
        }
        #expect(!onBucket.isEmpty, "\(requests)")
        for line in onBucket {
            #expect(line.hasPrefix("GET ") && (line.contains("prefix=dir%2F") || line.contains("prefix=dir/")), "\(line)")
        }
    }

    @Test("small files the origin names cost one HEAD each into a bucket: the one the refusal judged is the PutObject's precondition")
    func oneLookupPerNamedFile() throws {
        let moto = try MotoS3(recording: true)
        let bucket = try S3Bucket("named", endpoint: moto.endpoint)
        let database = try TestDatabase()
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let files = try (0..<6).map { try origin.create("/named/f\($0).bin", size: 1000 + $0) }
        let list = Harness.temporaryDirectory("s3-named") + "/urls.txt"
        try files.map(\.url).joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
        let before = try moto.requests().count
        let get = try Run.haul(["get", "-q", "-i", list, "-o", "s3://\(bucket.name)/n/"], database: database.url, environment: bucket.storeEnvironment)
        #expect(get.status == 0, "\(get.stderr)")
        for (n, file) in files.enumerated() { #expect(try bucket.object("n/f\(n).bin")?.sha256 == file.sha256, "f\(n).bin") }
        let requests = Array(try moto.requests().dropFirst(before))
        for n in files.indices {
            let heads = requests.filter { $0.hasPrefix("HEAD ") && $0.contains("/n/f\(n).bin") }
            #expect(heads.count == 1, "f\(n).bin: \(heads)")
        }
    }

    @Test("--upload-to s3:// keeps an object haul did not upload from the URL (exit non-zero, object unchanged); --force replaces it")
    func uploadToKeepsOthers() throws {
        let moto = try MotoS3()
        let bucket = try S3Bucket("upkeep", endpoint: moto.endpoint)
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("upload-keep")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let file = try origin.create("/upkeep/f.bin", size: 70_001)
        try bucket.put("up/f.bin", "someone else's\n")
        let theirs = try bucket.object("up/f.bin")
        let refused = try Run.haul(
            ["get", "-q", file.url, "-o", work + "/f.bin", "--upload-to", "s3://\(bucket.name)/up/"], database: database.url,
            environment: bucket.storeEnvironment)
        #expect(refused.status != 0, "\(refused.stderr)")
        #expect(refused.stderr.contains("already exists") && refused.stderr.contains("--force"), "\(refused.stderr)")
        #expect(try bucket.object("up/f.bin")?.sha256 == theirs?.sha256, "their object is left as it was")
        let forced = try Run.haul(
            ["get", "-q", file.url, "-o", work + "/g.bin", "--upload-to", "s3://\(bucket.name)/up/f.bin", "--force"], database: database.url,
            environment: bucket.storeEnvironment)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try bucket.object("up/f.bin")?.sha256 == file.sha256)
        // Its own upload of the same URL, the same command again, is replaced without --force.
        let again = try Run.haul(
            ["get", "-q", file.url, "-o", work + "/h.bin", "--upload-to", "s3://\(bucket.name)/up/f.bin"], database: database.url,
            environment: bucket.storeEnvironment)
        #expect(again.status == 0, "\(again.stderr)")
    }
}
