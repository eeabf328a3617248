import Foundation
import HaulTestSupport
import Testing

/// `haul get`: the single-machine shortcut, on the embedded default and on a cluster database.
@Suite("haul get")
struct GetTests {
    @Test("with no database configured, haul starts its own PostgreSQL, downloads, and stops it")
    func embeddedDefault() throws {
        let home = Harness.temporaryDirectory("home")
        let work = Harness.temporaryDirectory("get")
        defer {
            try? FileManager.default.removeItem(atPath: work)
        }
        let file = try Origin.file("get/embedded.iso", size: 3 * 1_048_576 + 5)
        let result = try Run.haul(
            ["get", Harness.origin + file.path, "--segment-size", "1MiB", "--checksum", "sha256:\(file.sha256)"],
            database: nil, environment: ["HAUL_HOME": home, "HAUL_EMBEDDED_LINGER": "0"], directory: work, timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: work + "/embedded.iso") == file.sha256)
        #expect(result.stderr.contains("saved"), "\(result.stderr)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: work)
        #expect(leftovers == ["embedded.iso"])
        // The private cluster lives under HAUL_HOME and is stopped on exit: no postmaster.pid left.
        #expect(FileManager.default.fileExists(atPath: home + "/postgres/PG_VERSION"), "the cluster was created under HAUL_HOME")
        #expect(!FileManager.default.fileExists(atPath: home + "/postgres/postmaster.pid"), "the embedded server was stopped")
    }

    @Test("-o names the file; without it the name comes from Content-Disposition, sanitised to stay inside")
    func naming() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("naming")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("get/named.bin", size: 70_000)
        let explicit = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/sub/explicit.bin"], database: database.url)
        #expect(explicit.status == 0, "\(explicit.stderr)")
        #expect(Origin.sha256(file: work + "/sub/explicit.bin") == file.sha256)
        // The origin suggests "../../etc/report final.bin": only the base name is kept.
        let suggested = try Run.haul(["get", Harness.origin + "/named" + file.path], database: database.url, directory: work)
        #expect(suggested.status == 0, "\(suggested.stderr)")
        #expect(Origin.sha256(file: work + "/report final.bin") == file.sha256)
    }

    @Test("a get of a missing file exits 8 (the origin's error) with the origin's reason")
    func failure() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("fail")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let result = try Run.haul(["get", Harness.origin + "/get/does-not-exist.bin"], database: database.url, directory: work)
        #expect(result.status == 8)
        #expect(result.stderr.contains("404"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty)
    }

    /// A get's transfer is run again by its own command, not by `haul retry` (which only
    /// prepares it for that command): its failures' hints say so.
    @Test("a get whose file fails its checksum says the same get downloads it again, not 'haul retry'")
    func failureHintNamesTheGet() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("fail-hint")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("get/hint.bin", size: 50_000)
        let wrong = "sha256:" + String(repeating: "0", count: 64)
        let result = try Run.haul(["get", Harness.origin + file.path, "--checksum", wrong], database: database.url, directory: work)
        #expect(result.status == 10)
        #expect(result.stderr.contains("checksum mismatch") && result.stderr.contains("the same 'haul get' command downloads it again"), "\(result.stderr)")
        #expect(!result.stderr.contains("haul retry"), "\(result.stderr)")
    }

    /// The bytes of a file that failed its checksum are kept: run again with the digest they
    /// have (the one given was wrong), the get verifies and publishes them without fetching a
    /// byte; run again as it was, it fetches the file again from its first byte.
    @Test("a get that failed its checksum keeps its bytes: the right --checksum publishes them unfetched, the same one fetches them again")
    func checksumCorrected() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("checksum-fixed")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("get/corrected-\(UUID().uuidString.prefix(6)).bin", size: 3 * 1_048_576)
        let get = { (digest: String) in
            try Run.haul(
                ["get", Harness.origin + file.path, "-o", work + "/c.bin", "--segment-size", "1MiB", "--checksum", digest], database: database.url)
        }
        let wrong = "sha256:" + String(repeating: "0", count: 64)
        #expect(try get(wrong).status == 10)
        let firstTry = Origin.requests(for: file.path).count
        let same = try get(wrong)
        #expect(same.status == 10 && same.stderr.contains("checksum mismatch"), "\(same.stderr)")
        #expect(Origin.requests(for: file.path).count >= firstTry + 3, "the same digest fetches every segment again")

        let before = Origin.requests(for: file.path).count
        let right = try get("sha256:" + file.sha256)
        #expect(right.status == 0, "\(right.stderr)")
        #expect(Origin.sha256(file: work + "/c.bin") == file.sha256)
        #expect(Origin.requests(for: file.path).count == before, "the bytes kept were published without a request")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work) == ["c.bin"])
    }

    /// A rerun asks the origin for a version newer than the one its own earlier get saved; the
    /// validators of a newer copy the URL left in another folder would have the origin answer
    /// 304 for this folder's older file, which would then be kept as current.
    @Test("a rerun into one folder is judged by its own earlier copy, not by a newer one the URL left in another folder")
    func previousVersionPerFolder() throws {
        let database = try TestDatabase()
        let first = Harness.temporaryDirectory("version-a"), other = Harness.temporaryDirectory("version-b")
        defer { for folder in [first, other] { try? FileManager.default.removeItem(atPath: folder) } }
        let name = "get/version-\(UUID().uuidString.prefix(6)).bin"
        let old = try Origin.file(name, size: 40_000)
        #expect(try Run.haul(["get", Harness.origin + old.path, "-o", first + "/x.bin"], database: database.url).status == 0)
        usleep(1_100_000)  // Last-Modified has one-second resolution.
        // A new version of the same size: only the validators tell the versions apart.
        try Data(repeating: 0x5A, count: 40_000).write(to: URL(fileURLWithPath: Harness.docroot + old.path))
        let newSHA = try #require(Origin.sha256(file: Harness.docroot + old.path))
        #expect(newSHA != old.sha256)
        #expect(try Run.haul(["get", Harness.origin + old.path, "-o", other + "/x.bin"], database: database.url).status == 0)
        let again = try Run.haul(["get", Harness.origin + old.path, "-o", first + "/x.bin"], database: database.url)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Origin.sha256(file: first + "/x.bin") == newSHA, "the older copy was replaced: \(again.stderr)")
        #expect(again.stderr.contains("saved "), "\(again.stderr)")
    }

    /// A get the origin names has no file name before its probe: its rerun finds the file the
    /// last get of the URL saved in the folder and asks the origin for a newer version than it,
    /// as a rerun with `-o FILE` does, alone (the lone probe) and in a list (the probe batch).
    @Test("a rerun of a get the origin names asks for a newer version than the file it saved, alone and in a list")
    func originNamedRerun() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("origin-named")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let tag = UUID().uuidString.prefix(6)
        let big = try Origin.file("get/named-\(tag).bin", size: 300_000)
        let small = try Origin.file("get/listed-\(tag).bin", size: 5_000)
        let bigName = work + "/named-\(tag).bin", smallName = work + "/listed-\(tag).bin"
        let get = { (files: [(path: String, sha256: String)]) in
            try Run.haul(["get"] + files.map { Harness.origin + $0.path } + ["-o", work + "/"], database: database.url)
        }
        #expect(try get([big]).status == 0)
        let inode = try FileManager.default.attributesOfItem(atPath: bigName)[.systemFileNumber] as? Int

        let again = try get([big])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("\(bigName) is up to date: unchanged at the origin"), "\(again.stderr)")
        #expect(Origin.requests(for: big.path).last?.contains("\" 304 ") == true, "\(Origin.requests(for: big.path))")
        #expect(try FileManager.default.attributesOfItem(atPath: bigName)[.systemFileNumber] as? Int == inode, "the file was left as it was")

        #expect(try get([big, small]).status == 0)
        let listed = try get([big, small])
        #expect(listed.status == 0, "\(listed.stderr)")
        for name in [bigName, smallName] { #expect(listed.stderr.contains("\(name) is up to date"), "\(listed.stderr)") }
        #expect(Origin.requests(for: small.path).last?.contains("\" 304 ") == true, "\(Origin.requests(for: small.path))")
        #expect(try database.scalar("SELECT count(*) FROM transfers WHERE unchanged AND dest IS NOT NULL") == "4")

        usleep(1_100_000)  // Last-Modified has one-second resolution.
        let changed = try Origin.file("get/named-\(tag).bin", size: 300_000)
        let fetched = try get([big])
        #expect(fetched.status == 0 && fetched.stderr.contains("saved \(bigName)"), "\(fetched.stderr)")
        #expect(Origin.sha256(file: bigName) == changed.sha256)
    }

    /// A file edited in place after its get (same size, its mark kept, as `cp` over it keeps it
    /// too) is not the origin's version any more: the rerun fetches it whole again rather than
    /// reporting it up to date, for a file named with -o and for one the origin names.
    @Test("a rerun fetches again a file written since its get, rather than calling it up to date")
    func editedFileFetchedAgain() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("edited")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let tag = UUID().uuidString.prefix(6)
        let file = try Origin.file("get/edited-\(tag).bin", size: 300_000)
        for output in [work + "/mine.bin", work + "/"] {
            let path = output.hasSuffix("/") ? work + "/edited-\(tag).bin" : output
            let get = { try Run.haul(["get", Harness.origin + file.path, "-o", output], database: database.url) }
            #expect(try get().status == 0)
            let handle = try #require(FileHandle(forUpdatingAtPath: path))
            try handle.seek(toOffset: 1000)
            try handle.write(contentsOf: Data("edited".utf8))
            try handle.close()
            #expect(Origin.sha256(file: path) != file.sha256)

            let again = try get()
            #expect(again.status == 0 && again.stderr.contains("saved \(path)"), "\(output): \(again.stderr)")
            #expect(Origin.requests(for: file.path).last?.contains("\" 304 ") == false, "\(Origin.requests(for: file.path))")
            #expect(Origin.sha256(file: path) == file.sha256, "\(output): the origin's bytes again")
            // Unwritten since, it is up to date again.
            let third = try get()
            #expect(third.stderr.contains("\(path) is up to date"), "\(output): \(third.stderr)")
        }

        // Small files in a list, which the probe batch fetches and publishes: only the edited one again.
        let small = try (0..<2).map { try Origin.file("get/edited-small-\(tag)-\($0).bin", size: 5_000) }
        let folder = work + "/list/"
        let list = { try Run.haul(["get"] + small.map { Harness.origin + $0.path } + ["-o", folder], database: database.url) }
        #expect(try list().status == 0)
        let edited = folder + "edited-small-\(tag)-0.bin", untouched = folder + "edited-small-\(tag)-1.bin"
        try Data(repeating: 0x41, count: 5_000).write(to: URL(fileURLWithPath: edited))
        let again = try list()
        #expect(again.status == 0 && again.stderr.contains("saved \(edited)") && again.stderr.contains("\(untouched) is up to date"), "\(again.stderr)")
        #expect(Origin.sha256(file: edited) == small[0].sha256)
    }

    @Test("a get looks up earlier gets of its URL through their own index, not by reading every transfer of the fleet")
    func earlierGetsIndexed() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("lookup")
        defer { try? FileManager.default.removeItem(atPath: work) }
        // A fleet's database: many transfers enqueued for the workers, none of them a get's, half
        // of them unfinished (with only finished ones, the small index of unfinished rows is the
        // cheaper way to find an unfinished get, and rightly taken).
        _ = try database.scalar(
            """
            INSERT INTO transfers (url, host, dest, segment_size, state)
            SELECT 'http://mirror.example/f' || i, 'mirror.example', 'f' || i, 8388608, CASE WHEN i % 2 = 0 THEN 'pending' ELSE 'done' END
            FROM generate_series(1, 20000) i;
            ANALYZE transfers
            """)
        let file = try Origin.file("get/lookup.bin", size: 10_000)
        for _ in 0..<2 {
            // The second get finds the file the first saved: both look for an unfinished earlier get, the second also for a finished one.
            let result = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/lookup.bin", "--force"], database: database.url)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let scans = try database.scalar("SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'transfers_local_target'")
        #expect((Int(scans) ?? 0) >= 2, "the lookups went through transfers_local_target (\(scans.isEmpty ? "no such index" : scans + " scans"))")
    }

    @Test("on a fleet's database, haul get takes on only its own transfer: the fleet's stay queued, and nothing of theirs lands in the get's folder")
    func onlyItsOwnTransfers() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("own")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let fleetFile = try Origin.file("get/fleet.bin", size: 20_000)
        let mine = try Origin.file("get/mine.bin", size: 30_000)
        // No fleet worker runs: a pending fleet transfer, and a canceled one whose partial data a fleet worker has yet to remove.
        let pending = try Run.haul(["enqueue", Harness.origin + fleetFile.path, "--dest", "fleet/pending.bin"], database: database.url)
        let canceled = try Run.haul(["enqueue", Harness.origin + fleetFile.path, "--dest", "fleet/canceled.bin"], database: database.url)
        try #require(pending.status == 0 && canceled.status == 0, "\(pending.stderr)\(canceled.stderr)")
        let canceledID = canceled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try database.scalar("UPDATE transfers SET state = 'canceled', cleanup_pending = true WHERE id = \(canceledID)")
        let result = try Run.haul(["get", Harness.origin + mine.path, "-o", work + "/mine.bin"], database: database.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work) == ["mine.bin"], "the get's folder holds its own file only")
        #expect(try database.scalar("SELECT state FROM transfers WHERE dest = 'fleet/pending.bin'") == "pending", "the fleet's transfer waits for the fleet")
        #expect(try database.scalar("SELECT cleanup_pending FROM transfers WHERE id = \(canceledID)") == "t", "its clean-up is left to the fleet's workers")
    }

    @Test("a get opens two database sessions whatever its --connections: the command's, and one that its worker's threads share")
    func twoSessions() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("sessions")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let small = try Origin.file("get/sessions.bin", size: 4096)
        // Twelve segments for eight lanes, each of which used to open a session of its own.
        let large = try Origin.file("get/sessions-large.bin", size: 24 << 20)
        let sessions = "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
        for (file, flags) in [(small, ["-x", "8"]), (large, ["-x", "8", "--segment-size", "2M"])] {
            let before = Int(try database.scalar(sessions)) ?? 0
            let result = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/"] + flags, database: database.url)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Origin.sha256(file: work + "/" + (file.path as NSString).lastPathComponent) == file.sha256)
            // Counted as each session ends: the get's, and the psql session that read `before`.
            let opened = (Int(try database.scalar(sessions)) ?? 0) - before - 1
            #expect(opened == 2, "the get of \(file.path) opened \(opened) sessions")
        }
    }
}
