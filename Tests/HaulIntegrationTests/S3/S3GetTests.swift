import Foundation
import HaulTestSupport
import Testing

/// `haul get -o s3://` against a real S3 server (SeaweedFS), objects checked with boto3.
@Suite("S3 storage: haul get")
struct S3GetTests {
    static let mib = 1_048_576

    @Test("small, multi-part and checksummed files arrive byte-identical, with no upload left open")
    func objects() throws {
        let bucket = try S3Bucket("get")
        let database = try TestDatabase()
        let small = try Origin.file("s3/small-\(UUID().uuidString.prefix(6)).bin", size: 100_003)
        let big = try Origin.file("s3/big-\(UUID().uuidString.prefix(6)).bin", size: 23 * Self.mib + 7)
        let first = try Run.haul(
            ["get", Harness.origin + small.path, "-o", "s3://\(bucket.name)/a/small.bin"], database: database.url, environment: S3Bucket.environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("saved s3://\(bucket.name)/a/small.bin"), "\(first.stderr)")
        let one = try bucket.stored("a/small.bin")
        #expect(one?.sha256 == small.sha256)
        #expect(one?.isSinglePut == true, "below the 5 MiB part minimum: one PutObject, not a multipart upload (ETag \(one?.etag ?? "none"))")
        // 1 MiB asked for: parts are grown to S3's 5 MiB minimum; five parts, completed in order.
        let second = try Run.haul(
            ["get", Harness.origin + big.path, "-o", "s3://\(bucket.name)/b/", "--segment-size", "1MiB", "--checksum", "sha256:\(big.sha256)"],
            database: database.url, environment: S3Bucket.environment)
        #expect(second.status == 0, "\(second.stderr)")
        let name = String(big.path.split(separator: "/").last!)
        let stored = try bucket.object("b/" + name)
        #expect(stored?.size == 23 * Self.mib + 7 && stored?.sha256 == big.sha256, "\(String(describing: stored))")
        #expect(try database.scalar("SELECT count(*) FROM segments WHERE part_etag IS NOT NULL") == "6", "one part per segment (1 + 5)")
        #expect(try database.scalar("SELECT sum(bytes_done) FROM segments") == String(100_003 + 23 * Self.mib + 7), "progress counts every part")
        #expect(try bucket.openUploads().isEmpty)
        #expect(try database.scalar("SELECT count(*) FROM transfers WHERE object_upload_id IS NOT NULL") == "0")
    }

    /// Run again, a get the origin names finds the objects the last one saved under the prefix
    /// (looked up side by side in a batch) and asks the origin only for newer versions.
    @Test("a get into an s3:// prefix run again asks for newer versions than the objects it saved, alone and in a list")
    func originNamedRerun() throws {
        let bucket = try S3Bucket("again")
        let database = try TestDatabase()
        let tag = UUID().uuidString.prefix(6)
        let files = [try Origin.file("s3/again-\(tag)-a.bin", size: 100_003), try Origin.file("s3/again-\(tag)-b.bin", size: 7 * Self.mib)]
        for list in [[files[1]], files] {
            let urls = list.map { Harness.origin + $0.path }
            let get = { try Run.haul(["get"] + urls + ["-o", "s3://\(bucket.name)/p/"], database: database.url, environment: S3Bucket.environment) }
            #expect(try get().status == 0)
            let again = try get()
            #expect(again.status == 0, "\(again.stderr)")
            for file in list {
                let name = String(file.path.split(separator: "/").last!)
                #expect(again.stderr.contains("s3://\(bucket.name)/p/\(name) is up to date"), "\(again.stderr)")
                #expect(Origin.requests(for: file.path).last?.contains("\" 304 ") == true, "\(Origin.requests(for: file.path))")
                #expect(try bucket.object("p/" + name)?.sha256 == file.sha256)
            }
        }
    }

    @Test(
        "haul get -o s3:// keeps an object it did not write (named by the key or by the origin): exit 2; --force replaces it; its own it fetches again, also after haul prune"
    )
    func keepsOthersObjects() throws {
        let bucket = try S3Bucket("keep")
        let database = try TestDatabase()
        let small = try Origin.file("s3/keep-\(UUID().uuidString.prefix(6))/notes.bin", size: 100_003)
        let big = try Origin.file("s3/keep-\(UUID().uuidString.prefix(6))/image.bin", size: 7 * Self.mib)
        let mine = Origin.sha256(Data("my own notes\n".utf8))
        let cases = [(small, "k/named.bin", "s3://\(bucket.name)/k/named.bin"), (big, "k/image.bin", "s3://\(bucket.name)/k/")]
        for (file, key, output) in cases {
            try bucket.put(key, "my own notes\n")
            let refused = try Run.haul(["get", "-q", Harness.origin + file.path, "-o", output], database: database.url, environment: S3Bucket.environment)
            #expect(refused.status == 2, "\(output): \(refused.stderr)")
            #expect(refused.stderr.contains("'s3://\(bucket.name)/\(key)' already exists") && refused.stderr.contains("--force"), "\(refused.stderr)")
            #expect(try bucket.object(key)?.sha256 == mine, "\(output): the object is left as it was")
            let forced = try Run.haul(
                ["get", "-q", Harness.origin + file.path, "-o", output, "--force"], database: database.url, environment: S3Bucket.environment)
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(try bucket.object(key)?.sha256 == file.sha256)
            let again = try Run.haul(["get", "-q", Harness.origin + file.path, "-o", output], database: database.url, environment: S3Bucket.environment)
            #expect(again.status == 0, "\(output): what haul wrote it may fetch again: \(again.stderr)")
            // Once the history is pruned, the object's mark (x-amz-meta-haul-source) says it.
            #expect(try Run.haul(["prune", "--older-than", "0s"], database: database.url).status == 0)
            let pruned = try Run.haul(["get", "-q", Harness.origin + file.path, "-o", output], database: database.url, environment: S3Bucket.environment)
            #expect(pruned.status == 0, "\(output): \(pruned.stderr)")
        }
        #expect(try bucket.openUploads().isEmpty)
    }

    @Test("a file below the part minimum with a wrong sha256 is refused by the store itself: no object ever appears")
    func wrongChecksumSmall() throws {
        let bucket = try S3Bucket("sumsmall")
        let database = try TestDatabase()
        let file = try Origin.file("s3/sumsmall-\(UUID().uuidString.prefix(6)).bin", size: 300_007)
        let wrong = try Run.haul(
            ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/s.bin", "--checksum", "sha256:" + String(repeating: "1", count: 64)],
            database: database.url, environment: S3Bucket.environment)
        #expect(wrong.status == 10, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("checksum mismatch"), "\(wrong.stderr)")
        #expect(try bucket.object("s.bin") == nil)
        let right = try Run.haul(
            ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/t.bin", "--checksum", "sha256:\(file.sha256)"],
            database: database.url, environment: S3Bucket.environment)
        #expect(right.status == 0, "\(right.stderr)")
        #expect(try bucket.stored("t.bin").map { $0.sha256 == file.sha256 && $0.isSinglePut } == true)
        #expect(try bucket.openUploads().isEmpty)
    }

    @Test("a wrong checksum fails the get and leaves neither the object nor an open upload")
    func wrongChecksum() throws {
        let bucket = try S3Bucket("sum")
        let database = try TestDatabase()
        let file = try Origin.file("s3/sum-\(UUID().uuidString.prefix(6)).bin", size: 7 * Self.mib)
        let result = try Run.haul(
            ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/x.bin", "--checksum", "sha256:" + String(repeating: "0", count: 64)],
            database: database.url, environment: S3Bucket.environment)
        #expect(result.status == 10, "\(result.stderr)")
        #expect(result.stderr.contains("checksum mismatch"), "\(result.stderr)")
        #expect(try bucket.object("x.bin") == nil, "a wrong object is never left under the name")
        #expect(try bucket.openUploads().isEmpty)
        // The same get again retries the failed transfer: on S3 it starts over (its upload is gone).
        let again = try Run.haul(
            ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/x.bin", "--checksum", "sha256:" + String(repeating: "0", count: 64)],
            database: database.url, environment: S3Bucket.environment)
        #expect(again.status == 10 && again.stderr.contains("resuming transfer"), "\(again.stderr)")
        #expect(again.stderr.contains("checksum mismatch"), "downloaded again and checked again: \(again.stderr)")
        #expect(try bucket.openUploads().isEmpty)
    }

    @Test("wrong credentials and a missing bucket fail fast with exit status 2 and clear errors; the secret is never shown")
    func refusals() throws {
        let bucket = try S3Bucket("auth")
        let database = try TestDatabase()
        let file = try Origin.file("s3/auth.bin", size: 1000)
        var wrong = S3Bucket.environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-xyz"
        let denied = try Run.haul(["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/k"], database: database.url, environment: wrong)
        #expect(denied.status == 2, "\(denied.stderr)")
        #expect(denied.stderr.contains("haul-test-key") && denied.stderr.contains(Harness.required("HAUL_TEST_S3_ENDPOINT")), "\(denied.stderr)")
        #expect(!denied.stderr.contains("not-the-secret-xyz"), "\(denied.stderr)")
        #expect(denied.stderr.split(separator: "\n").count == 1, "one line: \(denied.stderr)")
        let missing = try Run.haul(
            ["get", Harness.origin + file.path, "-o", "s3://no-such-bucket-xyz/k"], database: database.url, environment: S3Bucket.environment)
        #expect(missing.status == 2 && missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
        #expect(missing.stderr.contains("'no-such-bucket-xyz' does not exist"), "\(missing.stderr)")
        let worker = try Run.haul(["worker", "--storage", "s3://no-such-bucket-xyz/prefix"], database: database.url, environment: S3Bucket.environment)
        #expect(worker.status == 2 && worker.stderr.contains("'no-such-bucket-xyz' does not exist"), "\(worker.stderr)")
    }

    @Test("a URL-like -o or --storage with an unknown scheme is refused with exit 2, never made a local folder")
    func unknownScheme() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("scheme")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("s3/scheme.bin", size: 1000)
        let get = try Run.haul(["get", Harness.origin + file.path, "-o", "gs://bucket/key"], database: database.url, directory: work)
        #expect(get.status == 2, "\(get.stderr)")
        #expect(get.stderr.contains("unknown scheme 'gs'"), "\(get.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty, "nothing written locally")
        let worker = try Run.haul(["worker", "--storage", "ftp://host/x"], database: database.url, directory: work)
        #expect(worker.status == 2, "\(worker.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty)
    }

    @Test("--upload-to s3:// re-uploads the finished file: one PutObject when small, a multipart upload when large")
    func uploadTo() throws {
        let bucket = try S3Bucket("upload")
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("upload-to")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let small = try Origin.file("s3/up-small.bin", size: 70_001)
        let large = try Origin.file("s3/up-large.bin", size: 70 * Self.mib + 3)
        let first = try Run.haul(
            ["get", Harness.origin + small.path, "-o", work + "/small.bin", "--upload-to", "s3://\(bucket.name)/up/"], database: database.url,
            environment: S3Bucket.environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try bucket.object("up/small.bin")?.sha256 == small.sha256)
        let second = try Run.haul(
            ["get", Harness.origin + large.path, "-o", work + "/large.bin", "--upload-to", "s3://\(bucket.name)/up/renamed.bin"], database: database.url,
            environment: S3Bucket.environment)
        #expect(second.status == 0, "\(second.stderr)")
        let stored = try bucket.object("up/renamed.bin")
        #expect(stored?.size == 70 * Self.mib + 3 && stored?.sha256 == large.sha256)
        #expect(try database.scalar("SELECT upload_result FROM transfers WHERE dest = 'large.bin'").contains("2 parts"))
        #expect(try bucket.openUploads().isEmpty)
        let refused = try Run.haul(["enqueue", Harness.origin + small.path, "--upload-to", "s3://ab/k"], database: database.url)
        #expect(refused.status == 2, "\(refused.stderr)")
    }

    @Test("--extract on S3 writes each entry as an object under the extract-to prefix; a hostile archive leaves none")
    func extract() throws {
        let bucket = try S3Bucket("extract")
        let database = try TestDatabase()
        let folder = "s3x-" + UUID().uuidString.prefix(8)
        let source = Harness.temporaryDirectory("s3-extract")
        try FileManager.default.createDirectory(atPath: source + "/sub", withIntermediateDirectories: true)
        try "inside\n".write(toFile: source + "/note.txt", atomically: true, encoding: .utf8)
        var random = SplitMix64(seed: 7)
        try Data(random.bytes(200_000)).write(to: URL(fileURLWithPath: source + "/sub/blob.bin"))
        try FileManager.default.createDirectory(atPath: Harness.docroot + "/" + folder, withIntermediateDirectories: true)
        #expect(
            try Run.program("/usr/bin/tar", ["-czf", Harness.docroot + "/\(folder)/pack.tar.gz", "-C", source, "note.txt", "sub"], environment: [:]).status == 0
        )
        let good = try Run.haul(
            ["get", Harness.origin + "/\(folder)/pack.tar.gz", "-o", "s3://\(bucket.name)/a/pack.tar.gz", "--extract", "--extract-to", "unpacked"],
            database: database.url, environment: S3Bucket.environment)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(try bucket.keys("a/unpacked/") == ["a/unpacked/note.txt", "a/unpacked/sub/blob.bin"])
        #expect(try bucket.object("a/unpacked/sub/blob.bin")?.size == 200_000)
        // A tar whose second entry climbs out with '..': refused as a whole, nothing written.
        let script =
            "import tarfile,io,sys\nt=tarfile.open(sys.argv[1],'w')\nfor n in ['ok.txt','../evil.txt']:\n  i=tarfile.TarInfo(n); d=b'x'; i.size=1; t.addfile(i, io.BytesIO(d))\nt.close()"
        #expect(try Run.program("/usr/bin/python3", ["-c", script, Harness.docroot + "/\(folder)/evil.tar"], environment: [:]).status == 0)
        let evil = try Run.haul(
            ["get", Harness.origin + "/\(folder)/evil.tar", "-o", "s3://\(bucket.name)/b/evil.tar", "--extract", "--extract-to", "x"], database: database.url,
            environment: S3Bucket.environment)
        #expect(evil.status == 1, "\(evil.stderr)")
        #expect(evil.stderr.contains("refused"), "\(evil.stderr)")
        #expect(try bucket.keys("b/x").isEmpty && bucket.keys("evil").isEmpty)
    }

    @Test("a re-mirror of an unchanged file into S3 is answered 304 by the origin and keeps the object")
    func remirror() throws {
        let bucket = try S3Bucket("again")
        let database = try TestDatabase()
        let file = try Origin.file("s3/again-\(UUID().uuidString.prefix(6)).bin", size: 6 * Self.mib + 1)
        for _ in 0..<2 {
            let result = try Run.haul(
                ["get", Harness.origin + file.path, "-o", "s3://\(bucket.name)/m/a.bin"], database: database.url, environment: S3Bucket.environment)
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(try database.scalar("SELECT string_agg(unchanged::text, ',' ORDER BY id) FROM transfers") == "false,true", "the second one was a 304")
        #expect(try bucket.object("m/a.bin")?.sha256 == file.sha256)
        #expect(try bucket.openUploads().isEmpty)
    }

    @Test(
        "a malformed storage URL is refused up front with a hint, never saved into a local folder named after it",
        arguments: ["s3:/bucket/x.bin", "s3:bucket/x.bin", "S3://bucket/x.bin", "file:/tmp/x.bin"])
    func malformedStorageURL(output: String) throws {
        let work = Harness.temporaryDirectory("s3-slip")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let small = try Origin.file("s3/slip-\(UUID().uuidString.prefix(6)).bin", size: 1000)
        let database = try TestDatabase()
        let result = try Run.haul(
            ["get", Harness.origin + small.path, "-o", output], database: database.url, environment: S3Bucket.environment, directory: work)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("'\(output)'") && result.stderr.contains("s3://BUCKET/KEY"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty)
    }

    @Test("an S3 worker's startup line names its bucket and prefix")
    func workerNamesBucket() throws {
        let bucket = try S3Bucket("startlog")
        let cluster = try Cluster("s3-startlog")
        let worker = try cluster.startWorker([], environment: S3Bucket.environment, storage: "s3://\(bucket.name)/pre")
        let started = Harness.waitUntil(timeout: 30) { (worker.stdout + worker.stderr).contains("worker started") }
        let line = (worker.stdout + worker.stderr).split(separator: "\n").first { $0.contains("worker started") } ?? ""
        #expect(started && line.contains("s3://\(bucket.name)/pre"), "\(line)")
    }

    @Test("-N into s3://: an object stored after the origin's copy changed is kept untouched; once the origin's copy is newer it is replaced")
    func timestamping() throws {
        let bucket = try S3Bucket("stamp")
        let database = try TestDatabase()
        let served = try Origin.file("s3/stamp-\(UUID().uuidString.prefix(6)).bin", size: 300_000)
        try bucket.put("n/x.bin", "mine\n")
        let arguments = ["get", "-N", Harness.origin + served.path, "-o", "s3://\(bucket.name)/n/x.bin"]
        let kept = try Run.haul(arguments, database: database.url, environment: S3Bucket.environment)
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(try bucket.object("n/x.bin")?.sha256 == Origin.sha256(Data("mine\n".utf8)), "the newer object is untouched")
        #expect(kept.stderr.contains("up to date"), "\(kept.stderr)")
        try TimestampingTests.setModified(Harness.docroot + served.path, Int(Date().timeIntervalSince1970) + 3600)
        let replaced = try Run.haul(arguments, database: database.url, environment: S3Bucket.environment)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try bucket.object("n/x.bin")?.sha256 == served.sha256, "the older object was replaced by the origin's copy")
    }

    @Test("--upload-to from S3 storage reads the object back and uploads it; --delete-after-upload then deletes the object")
    func uploadToFromS3() throws {
        let bucket = try S3Bucket("upfrom")
        let database = try TestDatabase()
        let served = try Origin.file("s3/upfrom-\(UUID().uuidString.prefix(6)).bin", size: 6 * Self.mib + 5)
        let result = try Run.haul(
            ["get", Harness.origin + served.path, "-o", "s3://\(bucket.name)/a/x.bin", "--upload-to", "s3://\(bucket.name)/up/"], database: database.url,
            environment: S3Bucket.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try bucket.object("a/x.bin")?.sha256 == served.sha256)
        #expect(try bucket.object("up/x.bin")?.sha256 == served.sha256)
        let moved = try Run.haul(
            ["get", Harness.origin + served.path, "-o", "s3://\(bucket.name)/b/y.bin", "--upload-to", "s3://\(bucket.name)/up2/", "--delete-after-upload"],
            database: database.url, environment: S3Bucket.environment)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(try bucket.object("up2/y.bin")?.sha256 == served.sha256)
        #expect(try bucket.object("b/y.bin") == nil, "deleted after the upload")
    }

    @Test("each transfer records its storage and layout: s3://bucket/prefix and s3 for every object, file:///root for a folder")
    func recordsStorage() throws {
        let bucket = try S3Bucket("where")
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("where")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let small = try Origin.file("s3/where-\(UUID().uuidString.prefix(6)).bin", size: 100_003)
        let big = try Origin.file("s3/where-\(UUID().uuidString.prefix(6)).bin", size: 6 * Self.mib + 1)
        for (served, output) in [(small, "s3://\(bucket.name)/w/small.bin"), (big, "s3://\(bucket.name)/w/big.bin"), (small, work + "/small.bin")] {
            let result = try Run.haul(["get", Harness.origin + served.path, "-o", output], database: database.url, environment: S3Bucket.environment)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let rows = try database.scalar("SELECT string_agg(dest || ' ' || layout || ' ' || coalesce(storage, '-'), ',' ORDER BY id) FROM transfers")
        #expect(rows == "small.bin s3 s3://\(bucket.name)/w/,big.bin s3 s3://\(bucket.name)/w/,small.bin inplace file://\(work)", "\(rows)")
    }

    @Test("--layout parts with -o s3:// is refused before anything is downloaded")
    func layoutPartsRefused() throws {
        let bucket = try S3Bucket("noparts")
        let database = try TestDatabase()
        let small = try Origin.file("s3/noparts-\(UUID().uuidString.prefix(6)).bin", size: 1000)
        let result = try Run.haul(
            ["get", Harness.origin + small.path, "-o", "s3://\(bucket.name)/p.bin", "--layout", "parts"], database: database.url,
            environment: S3Bucket.environment)
        #expect(result.status == 2 && result.stderr.contains("--layout parts is for a folder"), "\(result.stderr)")
        #expect(try bucket.keys().isEmpty)
        #expect(Origin.requests(for: small.path).isEmpty)
    }
}
