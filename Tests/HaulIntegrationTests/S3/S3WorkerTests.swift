import Foundation
import HaulTestSupport
import Testing

/// Workers whose storage is an S3 bucket (`--storage s3://BUCKET/PREFIX`), against SeaweedFS.
@Suite("S3 storage: workers")
struct S3WorkerTests {
    static let mib = Reliability.mebibyte

    @Test("a batch of 200 files lands under the prefix, each byte-identical, no upload left open")
    func batch() throws {
        let bucket = try S3Bucket("batch")
        let cluster = try Cluster("s3-batch")
        let folder = "s3batch/" + UUID().uuidString.prefix(8)
        let files = try (0..<200).map { index in try Origin.file("\(folder)/f\(index).bin", size: [0, 1, 4096, 65_536, 100_003][index % 5] + index) }
        let manifest = Harness.temporaryDirectory("s3-manifest") + "/list.jsonl"
        try files.enumerated().map { #"{"url": "\#(Harness.origin)\#($1.path)", "dest": "d/f\#($0).bin"}"# }.joined(separator: "\n")
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        #expect(try cluster.haul(["enqueue", "--manifest", manifest, "--batch", "s3"]).status == 0)
        try cluster.startS3Worker("s3://\(bucket.name)/pre", ["--concurrency", "4"])
        try cluster.startS3Worker("s3://\(bucket.name)/pre", ["--concurrency", "4"])
        let wait = try cluster.haul(["wait", "--batch", "s3", "--timeout", "240s"])
        #expect(wait.status == 0, "\(wait.stdout) \(wait.stderr)")
        #expect(try bucket.keys("pre/").count == 200)
        for (index, file) in files.enumerated() where index % 7 == 0 {
            let stored = try bucket.stored("pre/d/f\(index).bin")
            #expect(stored?.sha256 == file.sha256, "f\(index)")
            #expect(index % 5 == 0 || stored?.isSinglePut == true, "f\(index) is one PutObject: ETag \(stored?.etag ?? "none")")
        }
        #expect(try bucket.openUploads().isEmpty)
        // Probed in batches and put whole by them: few files (if any) went one by one through a
        // segment's stream, which records the ETag of its upload on the segment row.
        let alone = try cluster.database.scalar("SELECT count(*) FROM segments WHERE part_etag IS NOT NULL")
        #expect(Int(alone) ?? 200 < 20, "\(alone) of 200 files went one by one")
        // A re-mirror of the same list: the batches ask with the stored validators, all 304.
        #expect(try cluster.haul(["enqueue", "--manifest", manifest, "--batch", "s3-again"]).status == 0)
        #expect(try cluster.haul(["wait", "--batch", "s3-again", "--timeout", "120s"]).status == 0)
        #expect(try cluster.database.scalar("SELECT count(*) FROM transfers WHERE unchanged") == "200")
    }

    @Test(
        "a transfer the origin names keeps an object another URL's transfer, or none, stored under that key; its own URL's, also after haul prune, it replaces"
    )
    func keepsOthersObjects() throws {
        let bucket = try S3Bucket("keep")
        let cluster = try Cluster("s3-keep")
        let folder = "s3keep/" + UUID().uuidString.prefix(8)
        let first = try Origin.file("\(folder)/a/kept.bin", size: 100_000)
        let second = try Origin.file("\(folder)/b/kept.bin", size: 100_001)
        let notes = try Origin.file("\(folder)/c/notes.txt", size: 4000)
        try bucket.put("pre/notes.txt", "my own notes\n")
        try cluster.startS3Worker("s3://\(bucket.name)/pre")
        let saved = try cluster.enqueue(Harness.origin + first.path)
        #expect(try cluster.waitFinal([saved]) == ["done"])
        let refused = [try cluster.enqueue(Harness.origin + second.path), try cluster.enqueue(Harness.origin + notes.path)]
        #expect(try cluster.waitFinal(refused) == ["failed", "failed"])
        for id in refused { #expect(try cluster.status(id)["error_code"] as? String == "destination-exists") }
        #expect(try bucket.object("pre/kept.bin")?.sha256 == first.sha256)
        #expect(try bucket.object("pre/notes.txt")?.sha256 == Origin.sha256(Data("my own notes\n".utf8)))
        // The history is gone; the object's own mark still says which URL stored it.
        #expect(try cluster.haul(["prune", "--older-than", "0s"]).status == 0)
        let newer = try Origin.file("\(folder)/a/kept.bin", size: 100_500)
        let again = try cluster.enqueue(Harness.origin + first.path)
        #expect(try cluster.waitFinal([again]) == ["done"])
        #expect(try bucket.object("pre/kept.bin")?.sha256 == newer.sha256)
        #expect(try bucket.openUploads().isEmpty)
    }

    @Test("a transfer the origin names checks its key again before completing: an object stored there meanwhile stays")
    func publishChecksKeyAgain() throws {
        let bucket = try S3Bucket("late")
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/late.bin", size: 12 * Self.mib, ["rate": 2 * Self.mib])
        let cluster = try Cluster("s3-late")
        let id = try cluster.enqueue(served.url, ["--segment-size", "6MiB"])
        try cluster.startS3Worker("s3://\(bucket.name)/pre", ["--concurrency", "2"])
        try #require(try Harness.waitUntil(timeout: 30) { try cluster.status(id)["dest"] as? String == "late.bin" })
        try bucket.put("pre/late.bin", "put there meanwhile\n")
        #expect(try cluster.waitFinal([id], timeout: 60) == ["failed"])
        #expect(try cluster.status(id)["error_code"] as? String == "destination-exists")
        #expect(try bucket.object("pre/late.bin")?.sha256 == Origin.sha256(Data("put there meanwhile\n".utf8)))
    }

    @Test("a multipart upload aborted mid-download (a lifecycle rule, an operator) starts the transfer over; the object ends whole")
    func abortedUploadStartsOver() throws {
        let bucket = try S3Bucket("aborted")
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/aborted.bin", size: 18 * Self.mib, ["rate": 2 * Self.mib])
        let cluster = try Cluster("s3-aborted")
        let id = try cluster.enqueue(served.url, ["--dest", "aborted.bin", "--segment-size", "6MiB"])
        try cluster.startS3Worker("s3://\(bucket.name)", ["--concurrency", "2"])
        try #require(try Harness.waitUntil(timeout: 30) { try cluster.database.segments(id).contains { $0.state == "running" && $0.bytesDone > 0 } })
        #expect(try bucket.abortUploads("aborted.bin") == 1)
        #expect(try cluster.waitFinal([id], timeout: 90) == ["done"], "\((try? cluster.status(id)) ?? [:])")
        #expect(try bucket.object("aborted.bin")?.sha256 == served.sha256)
        #expect(try cluster.database.scalar("SELECT generation FROM transfers WHERE id = \(id)") == "1", "started over")
        #expect(try bucket.openUploads().isEmpty)
    }

    @Test(
        "a finalizer that finds the object stored already (its upload completed, or its one PutObject done) takes it only if its ETag is the one it stored; a same-size stranger's is kept, and replaced with --force",
        arguments: [(size: 11 * mib + 5, multipart: true), (size: 3 * mib + 5, multipart: false)])
    func storedObjectNeedsItsETag(size: Int, multipart: Bool) throws {
        let bucket = try S3Bucket("stored")
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/stored.bin", size: size, [:])
        let cluster = try Cluster("s3-stored")
        let id = try cluster.enqueue(served.url, ["--dest", "c.bin", "--segment-size", "5MiB"])
        let storage = "s3://\(bucket.name)"
        var worker = try cluster.startS3Worker(storage)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(try bucket.stored("c.bin")?.isSinglePut == !multipart)
        // Back to finalizing, as after a finalizer that published and lost its lease before
        // recording so (completing the upload again is answered NoSuchUpload).
        func storedButNotRecorded() throws {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 20)
            let upload = multipart ? "'completed-before'" : "NULL"
            _ = try cluster.database.scalar(
                "UPDATE transfers SET state = 'finalizing', published_at = NULL, finished_at = NULL, object_upload_id = \(upload) WHERE id = \(id)")
        }
        try storedButNotRecorded()
        worker = try cluster.startS3Worker(storage)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(try cluster.database.scalar("SELECT generation FROM transfers WHERE id = \(id)") == "0", "its own object, taken as it is")

        // The same, but meanwhile somebody put other bytes of the same size under the key: not
        // this transfer's object, nor one haul stored; it is kept and the transfer fails.
        try storedButNotRecorded()
        try bucket.scramble("c.bin")
        let stranger = try bucket.object("c.bin")?.sha256
        worker = try cluster.startS3Worker(storage)
        #expect(try cluster.waitFinal([id], timeout: 60) == ["failed"])
        #expect(try cluster.status(id)["error_code"] as? String == "destination-exists")
        #expect(try bucket.object("c.bin")?.sha256 == stranger)
        // Enqueued with --force, the URL replaces it.
        let forced = try cluster.enqueue(served.url, ["--dest", "c.bin", "--segment-size", "5MiB", "--force"])
        #expect(try cluster.waitFinal([forced], timeout: 60) == ["done"])
        #expect(try bucket.object("c.bin")?.sha256 == served.sha256)
        #expect(try bucket.openUploads().isEmpty)
        withExtendedLifetime(worker) {}
    }

    @Test("a small file enqueued with --dest keeps an object haul did not store there; one haul stored from another URL is replaced")
    func smallFileKeepsStrangersObject() throws {
        let bucket = try S3Bucket("strangers")
        let small = try Origin.file("s3/strangers/small.txt", size: 4000)
        let other = try Origin.file("s3/strangers/other.txt", size: 3000)
        try bucket.put("kept.txt", "mine\n")
        let cluster = try Cluster("s3-strangers")
        try cluster.startS3Worker("s3://\(bucket.name)")
        let first = try cluster.enqueue(Harness.origin + other.path, ["--dest", "published.txt"])
        #expect(try cluster.waitFinal([first], timeout: 60) == ["done"])
        let kept = try cluster.enqueue(Harness.origin + small.path, ["--dest", "kept.txt"])
        let replaced = try cluster.enqueue(Harness.origin + small.path, ["--dest", "published.txt"])
        #expect(try cluster.waitFinal([kept, replaced], timeout: 60) == ["failed", "done"])
        #expect(try cluster.status(kept)["error_code"] as? String == "destination-exists")
        #expect(try bucket.object("kept.txt")?.sha256 == Origin.sha256(Data("mine\n".utf8)))
        #expect(try bucket.object("published.txt")?.sha256 == small.sha256)
    }

    @Test("a canceled transfer's multipart upload is aborted")
    func cancelAborts() throws {
        let bucket = try S3Bucket("cancel")
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/cancel.bin", size: 40 * Self.mib, ["rate": Self.mib])
        let cluster = try Cluster("s3-cancel")
        let id = try cluster.enqueue(served.url, ["--dest", "c.bin", "--segment-size", "5MiB"])
        try cluster.startS3Worker("s3://\(bucket.name)", ["--concurrency", "2"])
        try #require(try Harness.waitUntil(timeout: 30) { try cluster.database.segments(id).contains { $0.state == "running" && $0.bytesDone > 0 } })
        #expect(try bucket.openUploads() == ["c.bin"], "one upload open while it streams")
        #expect(try cluster.haul(["cancel", String(id)]).status == 0)
        let aborted = try Harness.waitUntil(timeout: 30) { try bucket.openUploads().isEmpty }
        #expect(aborted, "the upload was aborted: \((try? bucket.openUploads()) ?? [])")
        #expect(try cluster.state(id) == "canceled")
        #expect(try bucket.object("c.bin") == nil)
    }

    @Test("chaos: workers SIGKILLed at random while a file streams in; the object is byte-identical, no upload left open")
    func chaos() throws {
        let bucket = try S3Bucket("chaos")
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let size = 30 * Self.mib + 4321
        let served = try origin.create("/s3-chaos.bin", size: size, ["rate": Self.mib])
        let cluster = try Cluster("s3-chaos")
        let id = try cluster.enqueue(served.url, ["--dest", "chaos.bin", "--segment-size", "5MiB", "--checksum", "sha256:\(served.sha256)"])
        let flags = ["--lease", "2s", "--concurrency", "2"]
        let storage = "s3://\(bucket.name)/chaos"
        var workers = [try cluster.startS3Worker(storage, flags), try cluster.startS3Worker(storage, flags)]
        var random = SplitMix64(seed: 20_261_130)
        var kills = 0
        let final: Set<String> = ["done", "failed", "canceled"]
        let deadline = Date(timeIntervalSinceNow: 150)
        while Date() < deadline, !final.contains(try cluster.state(id)) {
            let wake = Date(timeIntervalSinceNow: 1.5 + Double(random.next() % 1500) / 1000)
            while Date() < wake, !final.contains(try cluster.state(id)) { usleep(50_000) }
            if final.contains(try cluster.state(id)) || kills >= 6 { break }
            let victim = Int(random.next() % UInt64(workers.count))
            workers[victim].signal(SIGKILL)
            _ = workers[victim].wait(timeout: 10)
            kills += 1
            workers[victim] = try cluster.startS3Worker(storage, flags)
        }
        #expect(try cluster.waitFinal([id], timeout: 120) == ["done"], "\((try? cluster.error(id)) ?? "")")
        let stored = try bucket.object("chaos/chaos.bin")
        #expect(stored?.size == size && stored?.sha256 == served.sha256, "byte-identical after \(kills) kills")
        #expect(kills >= 3, "the chaos was real: \(kills) kills")
        #expect(try cluster.status(id)["bytes_done"] as? Int == size)
        #expect(try bucket.openUploads().isEmpty)
    }

    @Test("a frozen worker (SIGSTOP) is fenced out: its late part never enters the completed object")
    func zombie() throws {
        let bucket = try S3Bucket("zombie")
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/s3-zombie.bin", size: 16 * Self.mib + 333, ["rate": Self.mib])
        let cluster = try Cluster("s3-zombie")
        let id = try cluster.enqueue(served.url, ["--dest", "z.bin", "--segment-size", "5MiB"])
        let storage = "s3://\(bucket.name)"
        let frozen = try cluster.startS3Worker(storage, ["--lease", "1s", "--concurrency", "2"])
        try #require(try Harness.waitUntil(timeout: 30) { try cluster.database.segments(id).contains { $0.state == "running" && $0.bytesDone > 0 } })
        frozen.signal(SIGSTOP)
        let rescuer = try cluster.startS3Worker(storage, ["--lease", "1s", "--concurrency", "4"])
        #expect(try cluster.waitFinal([id], timeout: 90) == ["done"], "\((try? cluster.error(id)) ?? "")")
        frozen.signal(SIGCONT)
        let woke = Harness.waitUntil(timeout: 30) { Self.noticedFence(frozen) }
        #expect(woke, "the woken worker noticed it was fenced:\n\(frozen.stderr)")
        let stored = try bucket.object("z.bin")
        #expect(stored?.sha256 == served.sha256 && stored?.size == served.size)
        #expect(try cluster.state(id) == "done")
        #expect(try bucket.openUploads().isEmpty)
        withExtendedLifetime(rescuer) {}
    }

    @Test("a frozen worker's late PutObject never replaces a newer object: its last byte waits for the lease")
    func zombiePut() throws {
        let bucket = try S3Bucket("zombieput")
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try origin.create("/s3-zombie-put.bin", size: 4 * Self.mib + 77, ["rate": Self.mib])
        let cluster = try Cluster("s3-zombie-put")
        let id = try cluster.enqueue(served.url, ["--dest", "p.bin"])
        let storage = "s3://\(bucket.name)"
        let frozen = try cluster.startS3Worker(storage, ["--lease", "1s", "--concurrency", "1"])
        try #require(try Harness.waitUntil(timeout: 30) { try cluster.database.segments(id).contains { $0.state == "running" && $0.bytesDone > 0 } })
        frozen.signal(SIGSTOP)
        let rescuer = try cluster.startS3Worker(storage, ["--lease", "1s", "--concurrency", "2"])
        #expect(try cluster.waitFinal([id], timeout: 90) == ["done"], "\((try? cluster.error(id)) ?? "")")
        let published = try bucket.stored("p.bin")
        #expect(published?.sha256 == served.sha256 && published?.isSinglePut == true, "\(String(describing: published))")
        rescuer.signal(SIGTERM)
        _ = rescuer.wait(timeout: 20)
        // A newer version is published meanwhile; the woken worker must not put its old bytes over it.
        try bucket.put("p.bin", "newer")
        frozen.signal(SIGCONT)
        let woke = Harness.waitUntil(timeout: 30) { Self.noticedFence(frozen) }
        #expect(woke, "the woken worker noticed it was fenced:\n\(frozen.stderr)")
        frozen.signal(SIGTERM)
        _ = frozen.wait(timeout: 20)
        let after = try bucket.stored("p.bin")
        #expect(after?.size == 5, "the newer object is still there: \(String(describing: after))\n\(frozen.stderr)")
        #expect(try cluster.state(id) == "done")
        #expect(try bucket.openUploads().isEmpty)
    }

    @Test("a frozen worker's batch of small files is fenced out: none of its late PutObjects replaces a newer object")
    func zombieBatch() throws {
        let bucket = try S3Bucket("zombiebatch")
        let origin = try FaultOrigin()
        defer { withExtendedLifetime(origin) {} }
        let served = try (0..<3).map { index in try origin.create("/s3-zombie-batch-\(index).bin", size: 3 * Self.mib + index, ["rate": Self.mib]) }
        let cluster = try Cluster("s3-zombie-batch")
        let ids = try served.enumerated().map { index, file in try cluster.enqueue(file.url, ["--dest", "b\(index).bin"]) }
        let storage = "s3://\(bucket.name)"
        let frozen = try cluster.startS3Worker(storage, ["--lease", "1s", "--concurrency", "4"])
        try #require(try Harness.waitUntil(timeout: 30) { try ids.allSatisfy { try cluster.state($0) == "planning" } })
        // Let the bytes flow into the requests before the freeze.
        usleep(800_000)
        frozen.signal(SIGSTOP)
        let rescuer = try cluster.startS3Worker(storage, ["--lease", "1s", "--concurrency", "4"])
        #expect(try cluster.waitFinal(ids, timeout: 90) == ["done", "done", "done"])
        for (index, file) in served.enumerated() { #expect(try bucket.object("b\(index).bin")?.sha256 == file.sha256) }
        rescuer.signal(SIGTERM)
        _ = rescuer.wait(timeout: 20)
        for index in served.indices { try bucket.put("b\(index).bin", "newer") }
        frozen.signal(SIGCONT)
        let woke = Harness.waitUntil(timeout: 30) { !Reliability.logLines(frozen, containing: "lease lost").isEmpty }
        #expect(woke, "the woken worker noticed it was fenced:\n\(frozen.stderr)")
        frozen.signal(SIGTERM)
        _ = frozen.wait(timeout: 20)
        for index in served.indices {
            #expect(try bucket.object("b\(index).bin")?.size == 5, "b\(index).bin is still the newer object\n\(frozen.stderr)")
        }
        #expect(try bucket.openUploads().isEmpty)
    }

    @Test(
        "the housekeeper aborts an upload a planner opened but never recorded once past the grace, and leaves other tools' uploads under the prefix alone"
    )
    func orphans() throws {
        let bucket = try S3Bucket("orphan")
        let cluster = try Cluster("s3-orphan")
        // An extraction's entry upload open for longer than the grace (a very large entry) is owned
        // through its record: the sweep leaves it alone. Started first, so it is past the grace
        // whenever the unowned one is.
        let entry = try bucket.startUpload("pre/unpacked/huge.bin")
        // A planner killed between opening its upload and recording its id leaves the intent it
        // recorded before opening it.
        try bucket.startUpload("pre/left-behind.bin")
        let intent =
            "WITH r AS (INSERT INTO object_upload_intents (bucket, key) VALUES ('\(bucket.name)', 'pre/left-behind.bin') RETURNING key) SELECT key FROM r"
        #expect(try cluster.database.scalar(intent) == "pre/left-behind.bin")
        // Another host's, fleet's or tool's uploads, under the prefix and outside it.
        try bucket.startUpload("pre/foreign.bin")
        try bucket.startUpload("elsewhere/not-ours.bin")
        let file = try Origin.file("s3/orphan-live.bin", size: 6 * Self.mib)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "live.bin"])
        let recorded =
            "WITH r AS (INSERT INTO extracted_objects (transfer_id, key, upload_id) VALUES (\(id), 'pre/unpacked/huge.bin', '\(entry)') RETURNING key) SELECT key FROM r"
        #expect(try cluster.database.scalar(recorded) == "pre/unpacked/huge.bin")
        let worker = try cluster.startWorker(
            ["--concurrency", "2"], environment: S3Bucket.environment.merging(["HAUL_S3_ORPHAN_GRACE": "1s", "HAUL_S3_ORPHAN_CHECK": "1s"]) { $1 },
            storage: "s3://\(bucket.name)/pre")
        #expect(try cluster.waitFinal([id]) == ["done"])
        let swept = try Harness.waitUntil(timeout: 30) { !(try bucket.openUploads().contains("pre/left-behind.bin")) }
        #expect(swept, "the orphan under the prefix was aborted: \((try? bucket.openUploads()) ?? [])")
        // Three more sweeps (one a second; a sweep logs only what it aborts): the recorded upload,
        // the foreign one under the prefix and the one outside it stay.
        let later = Reliability.logLines(worker, containing: "aborted orphaned S3 uploads").count
        Thread.sleep(forTimeInterval: 3)
        #expect(try bucket.openUploads().sorted() == ["elsewhere/not-ours.bin", "pre/foreign.bin", "pre/unpacked/huge.bin"], "\(worker.stderr)")
        #expect(Reliability.logLines(worker, containing: "aborted orphaned S3 uploads").count == later, "nothing more was aborted")
        #expect(try bucket.object("pre/live.bin")?.sha256 == file.sha256)
    }

    /// Whether a woken worker's log says it found itself fenced out (or failed the attempt it was in).
    private static func noticedFence(_ worker: Child) -> Bool {
        ["lease lost", "fenced off", "segment failed", "retrying in"].contains { !Reliability.logLines(worker, containing: $0).isEmpty }
    }
}
