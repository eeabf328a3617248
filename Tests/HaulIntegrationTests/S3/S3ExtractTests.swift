import Foundation
import HaulTestSupport
import Testing

/// `--extract` on S3 storage: entries streamed into objects, recorded, deleted on failure; objects
/// checked with boto3 (`s3check.py`), archives made by Python's own zipfile, tarfile and gzip.
@Suite("S3 storage: extraction")
struct S3ExtractTests {
    /// Writes archives into the origin's `folder` with Python (`script` sees `folder` and `random(n)`);
    /// returns what it prints as JSON (the sha256 of each member, by name).
    static func archives(_ folder: String, _ script: String) throws -> [String: String] {
        let directory = Harness.docroot + "/" + folder
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let prelude = """
            import gzip, hashlib, io, json, os, random as _r, sys, tarfile, zipfile
            folder = sys.argv[1]
            _g = _r.Random(12)
            def random(n): return _g.randbytes(n)
            def sha(b): return hashlib.sha256(b).hexdigest()
            def tar_add(t, name, data, kind=tarfile.REGTYPE, link=''):
                info = tarfile.TarInfo(name); info.size = len(data); info.type = kind; info.linkname = link
                t.addfile(info, io.BytesIO(data) if data else None)

            """
        let python = Harness.environment["HAUL_TEST_PYTHON"] ?? "python3"
        let result = try Run.program(python, ["-c", prelude + script, directory], environment: [:], timeout: 120)
        guard result.status == 0 else { throw TestFailure("making archives failed: \(result.stderr)") }
        return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String]) ?? [:]
    }

    /// `haul get` of `name` from the origin's `folder` into `s3://bucket/dest`, extracting to `to`.
    static func get(
        _ folder: String, _ name: String, bucket: S3Bucket, dest: String, to: String, database: TestDatabase, _ extra: [String] = []
    ) throws -> Run.Result {
        try Run.haul(
            ["get", Harness.origin + "/\(folder)/\(name)", "-o", "s3://\(bucket.name)/\(dest)", "--extract", "--extract-to", to] + extra,
            database: database.url, environment: S3Bucket.environment)
    }

    /// What `ordinary.sh` makes, with the file it holds and that file's size: zips of zeros
    /// from Info-ZIP and Python's zipfile (about 1000:1), and a GNU sparse tar of a 64 MiB disk
    /// image holding a few bytes (10 KiB: its holes are written out as zeros on S3).
    static let ordinary = [("infozip.zip", "zeros.bin", 64 << 20), ("python.zip", "zeros.bin", 64 << 20), ("small-sparse.tar", "disk.img", 64 << 20)]

    @Test("an ordinary zip of zeros or a GNU sparse tar extracts on S3 with the default limits, byte for byte", arguments: ordinary)
    func ordinaryArchive(_ kind: String, _ member: String, _ size: Int) throws {
        let bucket = try S3Bucket("xzero")
        let database = try TestDatabase()
        let folder = "s3xz-" + UUID().uuidString.prefix(8)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("HaulArchiveTests/Fixtures/ordinary.sh").path
        let made = try Run.program("/bin/sh", [script, kind, Harness.docroot + "/" + folder], environment: [:])
        #expect(made.status == 0, "\(made.stderr)")
        defer { try? FileManager.default.removeItem(atPath: Harness.docroot + "/" + folder) }
        let expected = try Data(contentsOf: URL(fileURLWithPath: Harness.docroot + "/\(folder)/expected/\(member)"))
        #expect(expected.count == size)
        let result = try Self.get(folder, kind, bucket: bucket, dest: "z/\(kind)", to: "out", database: database)
        #expect(result.status == 0, "\(result.stderr)")
        let stored = try bucket.object("z/out/\(member)")
        #expect(stored?.size == size && stored?.sha256 == Origin.sha256(expected), "\(String(describing: stored))")
        #expect(try bucket.keys("z/out/") == ["z/out/\(member)"])
        #expect(try bucket.openUploads().isEmpty)
    }

    @Test(
        "an extract-to prefix holding objects another wrote is refused (destination-not-empty) and nothing is replaced; the same URL into another prefix is a transfer of its own and extracts"
    )
    func occupiedPrefix() throws {
        let bucket = try S3Bucket("xfull")
        let database = try TestDatabase()
        let folder = "s3xfull-" + UUID().uuidString.prefix(8)
        let sums = try Self.archives(
            folder,
            """
            with tarfile.open(os.path.join(folder, 'set.tar.gz'), 'w:gz') as t:
                tar_add(t, 'a.txt', b'from the archive\\n')
            print(json.dumps({'a': sha(b'from the archive\\n')}))
            """)
        try bucket.put("one/out/a.txt", "my own notes\n")
        let refused = try Self.get(folder, "set.tar.gz", bucket: bucket, dest: "one/", to: "out", database: database)
        // A refusal that is the user's to resolve (choose another prefix): status 2, as for a folder.
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("already holds objects") && refused.stderr.contains("out"), "\(refused.stderr)")
        #expect(try bucket.object("one/out/a.txt")?.sha256 == Origin.sha256(Data("my own notes\n".utf8)), "the stranger's object is left as it was")
        #expect(try database.scalar("SELECT error_code FROM transfers") == "destination-not-empty")
        // The same URL into another prefix: not the failed transfer of the first (its archive is in one/).
        let other = try Self.get(folder, "set.tar.gz", bucket: bucket, dest: "two/", to: "out", database: database)
        #expect(other.status == 0, "\(other.stderr)")
        #expect(try bucket.object("two/out/a.txt")?.sha256 == sums["a"])
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "2")
    }

    @Test("zip, tar.gz and gz: every file entry becomes a byte-identical object (a big one in parts), and each key is recorded")
    func formats() throws {
        let bucket = try S3Bucket("xfmt")
        let database = try TestDatabase()
        let folder = "s3xf-" + UUID().uuidString.prefix(8)
        let sums = try Self.archives(
            folder,
            """
            big, small, text = random(20 * 1048576 + 17), random(300000), b'hello\\n' * 1000
            with zipfile.ZipFile(os.path.join(folder, 'pack.zip'), 'w') as z:
                z.writestr(zipfile.ZipInfo('empty/'), b'')
                z.writestr('docs/readme.txt', text, compress_type=zipfile.ZIP_DEFLATED)
                z.writestr('data/big.bin', big, compress_type=zipfile.ZIP_STORED)
                z.writestr('data/deep/small.bin', small, compress_type=zipfile.ZIP_DEFLATED)
                z.writestr('nothing.txt', b'')
            with tarfile.open(os.path.join(folder, 'pack.tar.gz'), 'w:gz') as t:
                tar_add(t, 'sub', b'', tarfile.DIRTYPE)
                tar_add(t, 'sub/small.bin', small)
                tar_add(t, 'big.bin', big)
            with open(os.path.join(folder, 'lone.bin.gz'), 'wb') as f:
                f.write(gzip.compress(small, mtime=0))
            print(json.dumps({'big': sha(big), 'small': sha(small), 'text': sha(text), 'empty': sha(b'')}))
            """)
        let zip = try Self.get(folder, "pack.zip", bucket: bucket, dest: "z/pack.zip", to: "unzipped", database: database)
        #expect(zip.status == 0, "\(zip.stderr)")
        #expect(
            try bucket.keys("z/unzipped/") == [
                "z/unzipped/data/big.bin", "z/unzipped/data/deep/small.bin", "z/unzipped/docs/readme.txt", "z/unzipped/nothing.txt",
            ])
        #expect(try bucket.object("z/unzipped/data/big.bin")?.sha256 == sums["big"])
        #expect(try bucket.object("z/unzipped/data/deep/small.bin")?.sha256 == sums["small"])
        #expect(try bucket.object("z/unzipped/docs/readme.txt")?.sha256 == sums["text"])
        #expect(try bucket.object("z/unzipped/nothing.txt")?.sha256 == sums["empty"])
        let tgz = try Self.get(folder, "pack.tar.gz", bucket: bucket, dest: "t/pack.tar.gz", to: "out", database: database)
        #expect(tgz.status == 0, "\(tgz.stderr)")
        #expect(try bucket.keys("t/out/") == ["t/out/big.bin", "t/out/sub/small.bin"])
        #expect(try bucket.object("t/out/big.bin")?.sha256 == sums["big"])
        #expect(try bucket.object("t/out/sub/small.bin")?.sha256 == sums["small"])
        // Entries have no type of their own: application/octet-stream, also the one stored in parts.
        #expect(try bucket.contentType("t/out/big.bin") == "application/octet-stream")
        #expect(try bucket.contentType("t/out/sub/small.bin") == "application/octet-stream")
        // No name in the gzip header: the object's own name less .gz (not the worker's spool file's name).
        let gz = try Self.get(folder, "lone.bin.gz", bucket: bucket, dest: "g/lone.bin.gz", to: "out", database: database)
        #expect(gz.status == 0, "\(gz.stderr)")
        #expect(try bucket.keys("g/out/") == ["g/out/lone.bin"])
        #expect(try bucket.object("g/out/lone.bin")?.sha256 == sums["small"])
        #expect(try database.scalar("SELECT string_agg(key, ',' ORDER BY key) FROM extracted_objects WHERE key LIKE 'g/%'") == "g/out/lone.bin")
        #expect(try database.scalar("SELECT count(*) FROM extracted_objects") == "7", "every object written is recorded")
        #expect(try bucket.openUploads().isEmpty)
        #expect(try database.scalar("SELECT count(*) FROM extracted_objects WHERE upload_id IS NOT NULL") == "0", "no upload is recorded open once completed")
    }

    @Test(
        "hostile archives are refused on S3 as on disk, and so are names that make hazardous keys; nothing is left",
        arguments: [
            ("climb.tar", "has a '..' component"), ("absolute.zip", "is an absolute path"), ("twice.tar", "appears twice"),
            ("inside.tar", "collides with another entry"), ("link.tar", "is a symlink"), ("bomb.tar.gz", "expands"),
            ("control.zip", "contains a control character"), ("long.tar", "more than S3's 1024"),
        ])
    func hostile(name: String, says: String) throws {
        let bucket = try S3Bucket("xbad")
        let database = try TestDatabase()
        let folder = "s3xh-" + UUID().uuidString.prefix(8)
        _ = try Self.archives(
            folder,
            """
            good = random(2 * 1048576)
            def tar(name, members, mode='w'):
                with tarfile.open(os.path.join(folder, name), mode, format=tarfile.PAX_FORMAT) as t:
                    for member in members: tar_add(t, *member)
            def zip(name, members):
                with zipfile.ZipFile(os.path.join(folder, name), 'w') as z:
                    for n, d in members: z.writestr(n, d)
            tar('climb.tar', [('ok.bin', good), ('../evil.txt', b'x')])
            zip('absolute.zip', [('ok.bin', good), ('/etc/evil', b'x')])
            tar('twice.tar', [('ok.bin', good), ('ok.bin', b'x')])
            tar('inside.tar', [('ok.bin', good), ('ok.bin/under', b'x')])
            tar('link.tar', [('ok.bin', good), ('l', b'', tarfile.SYMTYPE, 'ok.bin')])
            tar('bomb.tar.gz', [('ok.bin', random(50000)), ('zeros', bytes(64 * 1048576))], 'w:gz')
            zip('control.zip', [('ok.bin', good), ('bad\\x01name', b'x')])
            tar('long.tar', [('ok.bin', good), ('/'.join(['d' * 200] * 6), b'x')])
            print('{}')
            """)
        // 64 MiB of zeros compress about 1000:1, which the defaults accept: refused under a ratio limit asked for.
        let limits = name == "bomb.tar.gz" ? ["--extract-max-ratio", "200"] : []
        let result = try Self.get(folder, name, bucket: bucket, dest: "in/\(name)", to: "out", database: database, limits)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("was refused") && result.stderr.contains(says), "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("CURLE"), "\(result.stderr)")
        #expect(try bucket.keys("in/out") == [], "nothing written is left")
        #expect(try bucket.openUploads().isEmpty)
        #expect(try database.scalar("SELECT count(*) FROM extracted_objects") == "0")
    }

    @Test("an archive that breaks off mid-way: the objects already written and the open multipart upload are removed")
    func failureMidway() throws {
        let bucket = try S3Bucket("xcut")
        let database = try TestDatabase()
        let folder = "s3xc-" + UUID().uuidString.prefix(8)
        _ = try Self.archives(
            folder,
            """
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode='w', format=tarfile.USTAR_FORMAT) as t:
                tar_add(t, 'first.bin', random(300000))
                tar_add(t, 'second.bin', random(300000))
                tar_add(t, 'huge.bin', random(30 * 1048576))
            # Cut inside huge.bin, after more than two 8 MiB parts of it.
            open(os.path.join(folder, 'cut.tar'), 'wb').write(buffer.getvalue()[:2 * 300544 + 512 + 20 * 1048576])
            print('{}')
            """)
        let result = try Self.get(folder, "cut.tar", bucket: bucket, dest: "cut.tar", to: "out", database: database)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("truncated"), "\(result.stderr)")
        #expect(try bucket.keys("out") == [])
        #expect(try bucket.openUploads().isEmpty, "the entry's multipart upload was aborted")
        #expect(try database.scalar("SELECT count(*) FROM extracted_objects") == "0")
    }

    @Test("a finalizer taking over deletes what an earlier extraction attempt recorded before it starts over")
    func cleanupAfterRestart() throws {
        let bucket = try S3Bucket("xagain")
        let cluster = try Cluster("s3-extract-again")
        let folder = "s3xr-" + UUID().uuidString.prefix(8)
        let sums = try Self.archives(
            folder,
            """
            small = random(100000)
            with tarfile.open(os.path.join(folder, 'pack.tar.gz'), 'w:gz') as t:
                tar_add(t, 'a.bin', small)
            print(json.dumps({'small': sha(small)}))
            """)
        let id = try cluster.enqueue(Harness.origin + "/\(folder)/pack.tar.gz", ["--dest", "r/pack.tar.gz", "--extract", "--extract-to", "r/out"])
        // What a worker killed mid-extraction leaves: an object under the prefix and its record.
        try bucket.put("pre/r/out/ghost.txt", "from an earlier attempt")
        let recorded = "WITH r AS (INSERT INTO extracted_objects (transfer_id, key) VALUES (\(id), 'pre/r/out/ghost.txt') RETURNING key) SELECT key FROM r"
        #expect(try cluster.database.scalar(recorded) == "pre/r/out/ghost.txt")
        // And a long entry's multipart upload it left open, recorded with its key.
        let upload = try bucket.startUpload("pre/r/out/long.bin")
        let open =
            "WITH r AS (INSERT INTO extracted_objects (transfer_id, key, upload_id) VALUES (\(id), 'pre/r/out/long.bin', '\(upload)') RETURNING key) SELECT key FROM r"
        #expect(try cluster.database.scalar(open) == "pre/r/out/long.bin")
        try cluster.startS3Worker("s3://\(bucket.name)/pre")
        #expect(try cluster.waitFinal([id]) == ["done"])
        #expect(try bucket.openUploads().isEmpty, "the earlier attempt's open upload is aborted")
        #expect(try bucket.keys("pre/r/out/") == ["pre/r/out/a.bin"], "the earlier attempt's object is gone")
        #expect(try bucket.object("pre/r/out/a.bin")?.sha256 == sums["small"])
        #expect(try cluster.database.scalar("SELECT string_agg(key, ',') FROM extracted_objects WHERE transfer_id = \(id)") == "pre/r/out/a.bin")
    }
}
