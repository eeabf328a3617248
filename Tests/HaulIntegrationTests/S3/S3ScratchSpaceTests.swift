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

    @Test(
        "as root, haul neither uses nor writes through the scratch folder another user made in TMPDIR, and removes its own at exit",
        .enabled(if: getuid() == 0, "acts as nobody with runuser (root only)"))
    func foreignScratchFolder() throws {
        let bucket = try S3Bucket("scratchown")
        let database = try TestDatabase()
        let temporary = Harness.temporaryDirectory("s3-tmp")
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        #expect(chmod(temporary, 0o1777) == 0)
        // nobody plants the folder name haul once used as a symlink to a file of its own.
        let asNobody = { (words: [String]) in
            try Run.program("/usr/sbin/runuser", ["-u", "nobody", "--"] + words, environment: [:], directory: "/", timeout: 60)
        }
        #expect(try asNobody(["/bin/sh", "-c", "printf bait > \(temporary)/bait && ln -s \(temporary)/bait \(temporary)/haul-s3-0"]).status == 0)
        let folder = "s3own-" + UUID().uuidString.prefix(8)
        defer { try? FileManager.default.removeItem(atPath: Harness.docroot + "/" + folder) }
        let sums = try S3ExtractTests.archives(
            folder,
            """
            inner = random(300000)
            with zipfile.ZipFile(os.path.join(folder, 'pack.zip'), 'w') as z:
                z.writestr('data/inner.bin', inner, compress_type=zipfile.ZIP_DEFLATED)
            print(json.dumps({'inner': sha(inner)}))
            """)
        let result = try Run.haul(
            ["get", Harness.origin + "/\(folder)/pack.zip", "-o", "s3://\(bucket.name)/p/pack.zip", "--extract", "--extract-to", "out"],
            database: database.url, environment: S3Bucket.environment.merging(["TMPDIR": temporary]) { $1 })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try bucket.object("p/out/data/inner.bin")?.sha256 == sums["inner"])
        #expect(try String(contentsOfFile: temporary + "/bait", encoding: .utf8) == "bait")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).sorted() == ["bait", "haul-s3-0"])
    }
}
