import Foundation
import HaulTestSupport
import Testing

/// Never destroy a user's file: `haul get` does not overwrite what it did not write, two transfers
/// never share a destination, a rerun never fails on stale options, and cancel leaves nothing behind.
@Suite("destination safety")
struct DestinationSafetyTests {
    private func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test("haul get refuses a file it did not write (named by -o or by the origin); --force overwrites")
    func getKeepsExistingFiles() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("keep")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("safety/report.bin", size: 300_000)
        let mine = Data("my own notes\n".utf8)
        try mine.write(to: URL(fileURLWithPath: work + "/explicit.bin"))
        try mine.write(to: URL(fileURLWithPath: work + "/report.bin"))

        let explicit = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/explicit.bin"], database: database.url)
        #expect(explicit.status == 2, "\(explicit.stderr)")
        #expect(explicit.stderr.contains("--force") && explicit.stderr.contains("-o"), "\(explicit.stderr)")
        let named = try Run.haul(["get", Harness.origin + file.path], database: database.url, directory: work)
        #expect(named.status == 2, "\(named.stderr)")
        #expect(named.stderr.contains("--force") && named.stderr.contains("-o"), "\(named.stderr)")
        #expect(contents(work + "/explicit.bin") == mine)
        #expect(contents(work + "/report.bin") == mine)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).sorted() == ["explicit.bin", "report.bin"])

        let forced = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/explicit.bin", "--force"], database: database.url)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(Origin.sha256(file: work + "/explicit.bin") == file.sha256)
        // What haul wrote itself it may fetch again.
        let again = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/explicit.bin"], database: database.url)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Origin.sha256(file: work + "/explicit.bin") == file.sha256)
    }

    @Test("a rerun of haul get whose file the origin names fetches again what an earlier get of that URL saved, and still keeps the user's files")
    func getFetchesAgainWhatItNamed() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("renamed")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let first = try Origin.file("safety/named/nightly.bin", size: 200_000)
        let other = try Origin.file("safety/named/other.bin", size: 1000)
        try FileManager.default.createDirectory(atPath: work + "/into", withIntermediateDirectories: false)
        for words in [[String](), ["-o", work + "/into/"]] {
            let folder = words.isEmpty ? work : work + "/into"
            let saved = try Run.haul(["get", Harness.origin + first.path] + words, database: database.url, directory: work)
            #expect(saved.status == 0 && Origin.sha256(file: folder + "/nightly.bin") == first.sha256, "\(saved.stderr)")
            // The origin's copy changes; the same command again fetches it.
            let newer = try Origin.file("safety/named/nightly.bin", size: 250_000)
            let again = try Run.haul(["get", Harness.origin + first.path] + words, database: database.url, directory: work)
            #expect(again.status == 0 && Origin.sha256(file: folder + "/nightly.bin") == newer.sha256, "\(words): \(again.stderr)")
            _ = try Origin.file("safety/named/nightly.bin", size: 200_000)
        }
        // Another URL the origin names the same way did not save that file: it stays.
        let mine = Data("my own notes\n".utf8)
        try mine.write(to: URL(fileURLWithPath: work + "/other.bin"))
        let refused = try Run.haul(["get", Harness.origin + other.path], database: database.url, directory: work)
        #expect(refused.status == 2 && refused.stderr.contains("haul did not download it from this URL"), "\(refused.stderr)")
        #expect(contents(work + "/other.bin") == mine)
    }

    @Test("two URLs of one get that the origin names alike: one is saved whole, the other refused (exit 2), never a mix of both")
    func sameNameTwice() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("same-name")
        defer { try? FileManager.default.removeItem(atPath: work) }
        for (size, extra) in [(4096, [String]()), (3 * 1_048_576, ["--segment-size", "1MiB"]), (5 * 1_048_576, ["--force"])] {
            let first = try Origin.file("safety/twice-\(size)/a/same.bin", size: size)
            let second = try Origin.file("safety/twice-\(size)/b/same.bin", size: size)
            let folder = work + "/\(size)"
            let result = try Run.haul(["get", Harness.origin + first.path, Harness.origin + second.path, "-o", folder + "/"] + extra, database: database.url)
            #expect(result.status == 2 && result.stderr.contains("the origin names both alike"), "\(extra): \(result.stderr)")
            let saved = Origin.sha256(file: folder + "/same.bin")
            #expect(saved == first.sha256 || saved == second.sha256, "\(extra): same.bin is neither file whole")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["same.bin"])
        }
        // The same URL given twice is one download, not two that clash.
        let file = try Origin.file("safety/twice-url/same.bin", size: 100_000)
        let list = work + "/list.txt"
        try "\(Harness.origin + file.path)\n\(Harness.origin + file.path)\n".write(toFile: list, atomically: true, encoding: .utf8)
        let twice = try Run.haul(["get", Harness.origin + file.path, "-i", list, "-o", work + "/twice/"], database: database.url)
        #expect(twice.status == 0 && Origin.sha256(file: work + "/twice/same.bin") == file.sha256, "\(twice.stderr)")
        #expect(try database.scalar("SELECT count(*) FROM transfers WHERE url LIKE '%/twice-url/%'") == "1")
    }

    @Test(
        "two haul gets saving one file at once (one -o FILE, or URLs the origin names alike): the second is refused (exit 2) before it writes, never a mix",
        arguments: [TwoGets.segmented, .batch, .resumed])
    func twoGetsOneFile(_ shape: TwoGets) throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("two-gets")
        defer { try? FileManager.default.removeItem(atPath: work) }
        // Through /slow/ (4 MB/s a connection) each get runs for seconds: the second starts while the first writes.
        let names = shape == .batch ? ["s1.bin", "s2.bin"] : ["big.bin"]
        let size = shape == .batch ? 12 << 20 : 24 << 20
        // Files of this case's own: the cases run at once, and one rewriting another's origin
        // file (a new Last-Modified) would make that one start over.
        let first = try names.map { try Origin.file("safety/two-gets/\(shape.rawValue)/a/\($0)", size: size) }
        let second = try names.map { try Origin.file("safety/two-gets/\(shape.rawValue)/b/\($0)", size: size) }
        let options = shape == .batch ? ["-o", work + "/"] : ["-o", work + "/big.bin", "--segment-size", "8MiB"]
        func get(_ files: [(path: String, sha256: String)]) -> [String] { ["get", "-q"] + files.map { Harness.origin + "/slow" + $0.path } + options }
        let partial = work + "/" + names[0] + ".haul-partial"
        func startFirst() throws -> Child {
            // Held to 4 MB/s in all, the first get still writes while the second is refused and
            // its transfer canceled, also on a loaded machine (its 24 MiB take 6 s).
            let child = try Child(Harness.haulBinary, get(first) + ["--limit-rate", "4M"], environment: ["DATABASE_URL": database.url])
            try #require(Harness.waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: partial) }, "the first get made no partial file")
            return child
        }
        var writer = try startFirst()
        if shape == .resumed {
            // Interrupted and run again: the get that resumes the file holds it as the one that planned it did.
            Thread.sleep(forTimeInterval: 0.5)
            writer.signal(SIGINT)
            try #require(writer.wait(timeout: 20), "the interrupted get did not exit")
            writer = try startFirst()
            try #require(
                Harness.waitUntil(timeout: 20) {
                    try database.scalar("SELECT count(*) FROM segments WHERE state = 'running'") != "0"
                }, "the second run resumed no segment")
        }
        let refused = try Run.haul(get(second), database: database.url)
        #expect(refused.status == 2 && refused.stderr.contains("another haul process is saving \(work)/\(names[0]) right now"), "\(shape): \(refused.stderr)")
        // Canceling the refused transfers leaves the file the first get writes alone (the batch's
        // refused files were never named, so their cancel has no file to look at).
        let refusedIDs = try database.scalar(
            "SELECT string_agg(id::text, ' ') FROM transfers WHERE url LIKE '%/two-gets/\(shape.rawValue)/b/%' AND state = 'failed'")
        let cancel = try Run.haul(["cancel"] + refusedIDs.split(separator: " ").map(String.init), database: database.url)
        #expect(cancel.status == 0 && (shape == .batch || cancel.stderr.contains("left \(partial)")), "\(shape): \(cancel.stderr)")
        #expect(writer.wait(timeout: 60) && writer.exitStatus == 0, "\(shape): \(writer.stderr)")
        for (name, file) in zip(names, first) {
            #expect(Origin.sha256(file: work + "/" + name) == file.sha256, "\(shape): \(name) is not the first get's file whole")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).sorted() == names, "\(shape)")
    }

    /// How the first get of `twoGetsOneFile` writes its file.
    enum TwoGets: String, CustomStringConvertible {
        /// One file in segments (the planner makes the partial file, fetchers write it).
        case segmented
        /// Two whole files in one batch.
        case batch
        /// The segmented file, interrupted and resumed by the same command.
        case resumed

        var description: String { rawValue }
    }

    @Test("fleet transfers enqueued without --dest that the origin names alike: while one writes the file, the other is refused as busy")
    func fleetSameName() throws {
        let cluster = try Cluster("fleet-same")
        defer { cluster.stopWorkers() }
        let first = try Origin.file("safety/fleet/a/same.bin", size: 3 * 1_048_576)
        let second = try Origin.file("safety/fleet/b/same.bin", size: 3 * 1_048_576 + 1000)
        let ids = [
            try cluster.enqueue(Harness.origin + first.path, ["--segment-size", "1MiB"]),
            try cluster.enqueue(Harness.origin + second.path, ["--segment-size", "1MiB"]),
        ]
        // Two slow workers: each plans one while the other's download is still running.
        try cluster.startWorker(["--limit-rate", "1M"])
        try cluster.startWorker(["--limit-rate", "1M"])
        let states = try cluster.waitFinal(ids, timeout: 60)
        #expect(states.sorted() == ["done", "failed"], "\(states)")
        let saved = cluster.sha256("same.bin")
        #expect(saved == first.sha256 || saved == second.sha256, "same.bin is neither file whole")
        let refused = states[0] == "failed" ? ids[0] : ids[1]
        let error = try cluster.status(refused)["error"] as? String ?? ""
        #expect(error.contains("already writes 'same.bin'"), "\(error)")
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")
    }

    @Test(
        "a fleet transfer the origin names keeps a file on storage that another URL's transfer, or no transfer, wrote; it replaces its own URL's older copy"
    )
    func fleetKeepsOthersFiles() throws {
        let cluster = try Cluster("fleet-keep")
        defer { cluster.stopWorkers() }
        let first = try Origin.file("safety/keep/a/kept.bin", size: 3 * 1_048_576)
        let second = try Origin.file("safety/keep/b/kept.bin", size: 3 * 1_048_576 + 1000)
        let small = try Origin.file("safety/keep/c/notes.txt", size: 4000)
        let mine = Data("my own notes\n".utf8)
        try mine.write(to: URL(fileURLWithPath: cluster.storage + "/notes.txt"))
        try cluster.startWorker()

        let saved = try cluster.enqueue(Harness.origin + first.path, ["--segment-size", "1MiB"])
        #expect(try cluster.waitFinal([saved]) == ["done"])
        // Another URL named alike, and a small file named like the user's: refused, nothing replaced.
        let other = try cluster.enqueue(Harness.origin + second.path, ["--segment-size", "1MiB"])
        let notes = try cluster.enqueue(Harness.origin + small.path)
        #expect(try cluster.waitFinal([other, notes]) == ["failed", "failed"])
        for (id, name) in [(other, "kept.bin"), (notes, "notes.txt")] {
            let status = try cluster.status(id)
            let error = status["error"] as? String ?? ""
            #expect(status["error_code"] as? String == "destination-exists", "\(status)")
            #expect(error.contains("'\(name)' is already on the storage") && error.contains("haul retry \(id)"), "\(error)")
        }
        #expect(cluster.sha256("kept.bin") == first.sha256)
        #expect(contents(cluster.storage + "/notes.txt") == mine)
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")

        // The first URL again replaces its own older copy; the user's file, once removed, is fetched on retry.
        let changed = Data(repeating: 7, count: 2_000_000)
        try changed.write(to: URL(fileURLWithPath: Harness.docroot + first.path), options: .atomic)
        chmod(Harness.docroot + first.path, 0o644)
        let again = try cluster.enqueue(Harness.origin + first.path, ["--segment-size", "1MiB"])
        try FileManager.default.removeItem(atPath: cluster.storage + "/notes.txt")
        let retried = try cluster.haul(["retry", String(notes)])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(try cluster.waitFinal([again, notes]) == ["done", "done"])
        #expect(cluster.sha256("kept.bin") == Origin.sha256(changed))
        #expect(cluster.sha256("notes.txt") == small.sha256)
    }

    @Test(
        "a fleet transfer with --dest keeps a file there haul did not write (big, small, manifest line) and replaces one haul published; enqueue or retry with --force replaces either"
    )
    func explicitDestKeepsStrangersFiles() throws {
        let cluster = try Cluster("fleet-dest")
        defer { cluster.stopWorkers() }
        let big = try Origin.file("safety/dest/big.bin", size: 3 * 1_048_576)
        let small = try Origin.file("safety/dest/small.txt", size: 4000)
        let other = try Origin.file("safety/dest/other.txt", size: 5000)
        let mine = Data("mine\n".utf8)
        for name in ["big.bin", "small.txt", "listed.txt"] { try mine.write(to: URL(fileURLWithPath: cluster.storage + "/" + name)) }
        try cluster.startWorker()

        let bigID = try cluster.enqueue(Harness.origin + big.path, ["--dest", "big.bin", "--segment-size", "1MiB"])
        let smallID = try cluster.enqueue(Harness.origin + small.path, ["--dest", "small.txt"])
        let lists = Harness.temporaryDirectory("dest-manifest")
        defer { try? FileManager.default.removeItem(atPath: lists) }
        let manifest = lists + "/manifest.txt"
        let lines = "\(Harness.origin + small.path) listed.txt\n\(Harness.origin + other.path) published.txt\n"
        try lines.write(toFile: manifest, atomically: true, encoding: .utf8)
        #expect(try cluster.haul(["enqueue", "--manifest", manifest, "--batch", "dest-one"]).status == 0)
        #expect(try cluster.haul(["wait", "--batch", "dest-one", "--timeout", "60"]).status == 1)
        #expect(try cluster.waitFinal([bigID, smallID]) == ["failed", "failed"])
        for (id, name) in [(bigID, "big.bin"), (smallID, "small.txt")] {
            let status = try cluster.status(id)
            let error = status["error"] as? String ?? ""
            #expect(status["error_code"] as? String == "destination-exists", "\(status)")
            #expect(error.contains("'\(name)' is already on the storage and haul did not write it") && error.contains("haul retry \(id) --force"), "\(error)")
            #expect(contents(cluster.storage + "/" + name) == mine)
        }
        #expect(contents(cluster.storage + "/listed.txt") == mine)
        #expect(cluster.sha256("published.txt") == other.sha256)
        // A link planted at the name is not haul's either: kept, and never written through.
        try mine.write(to: URL(fileURLWithPath: lists + "/target.txt"))
        try FileManager.default.createSymbolicLink(atPath: cluster.storage + "/link.txt", withDestinationPath: lists + "/target.txt")
        let linked = try cluster.enqueue(Harness.origin + small.path, ["--dest", "link.txt"])
        #expect(try cluster.waitFinal([linked]) == ["failed"])
        #expect(try cluster.status(linked)["error_code"] as? String == "destination-exists")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: cluster.storage + "/link.txt") == lists + "/target.txt")
        #expect(contents(lists + "/target.txt") == mine)
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")

        // A file haul published, from another URL, is replaced: a name re-mirrored from a new URL.
        let replaced = try cluster.enqueue(Harness.origin + small.path, ["--dest", "published.txt"])
        // --force replaces the user's files too: retry of a transfer that kept one, and a whole manifest.
        let retried = try cluster.haul(["retry", String(bigID), "--force"])
        #expect(retried.status == 0, "\(retried.stderr)")
        try "\(Harness.origin + small.path) small.txt\n\(Harness.origin + small.path) listed.txt\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        #expect(try cluster.haul(["enqueue", "--manifest", manifest, "--batch", "dest-two", "--force"]).status == 0)
        #expect(try cluster.haul(["wait", "--batch", "dest-two", "--timeout", "60"]).status == 0)
        #expect(try cluster.waitFinal([replaced, bigID]) == ["done", "done"])
        #expect(cluster.sha256("published.txt") == small.sha256)
        #expect(cluster.sha256("big.bin") == big.sha256)
        #expect(cluster.sha256("small.txt") == small.sha256 && cluster.sha256("listed.txt") == small.sha256)
    }

    @Test("a canceled fleet transfer the origin named, started over by retry, is named and checked again: another URL's file written meanwhile stays")
    func restartNamesAgain() throws {
        let cluster = try Cluster("fleet-restart")
        defer { cluster.stopWorkers() }
        let first = try Origin.file("safety/restart/a/again.bin", size: 32 * 1_048_576)
        let second = try Origin.file("safety/restart/b/again.bin", size: 100_000)
        let id = try plannedSlowly(first.path, named: "again.bin", in: cluster)
        #expect(try cluster.haul(["cancel", String(id)]).status == 0)
        // The name is free once the transfer is canceled: another URL the origin names alike takes it.
        let other = try cluster.enqueue(Harness.origin + second.path)
        #expect(try cluster.waitFinal([other]) == ["done"])

        try retryIsRefused(id, in: cluster)
        #expect(cluster.sha256("again.bin") == second.sha256)
    }

    @Test("a failed fleet transfer the origin named, resumed by retry, checks its name again before publishing: a file put there meanwhile stays")
    func resumeChecksNameAgain() throws {
        let cluster = try Cluster("fleet-resume")
        defer { cluster.stopWorkers() }
        let file = try Origin.file("safety/resume/late.bin", size: 32 * 1_048_576)
        let origin = Harness.docroot + file.path
        let id = try plannedSlowly(file.path, named: "late.bin", in: cluster, ["--max-attempts", "1"])
        // The origin loses the file mid-download: the segments not yet started fail, and so does the transfer.
        try FileManager.default.moveItem(atPath: origin, toPath: origin + ".away")
        #expect(try cluster.waitFinal([id], timeout: 60) == ["failed"])
        // Back as it was (same bytes, same validators), and meanwhile a file of the user's under that name.
        try FileManager.default.moveItem(atPath: origin + ".away", toPath: origin)
        let mine = Data("my own copy\n".utf8)
        try mine.write(to: URL(fileURLWithPath: cluster.storage + "/late.bin"))

        try retryIsRefused(id, in: cluster)
        #expect(contents(cluster.storage + "/late.bin") == mine)
        // Once the user's file is gone, retry publishes what was downloaded.
        try FileManager.default.removeItem(atPath: cluster.storage + "/late.bin")
        #expect(try cluster.haul(["retry", String(id)]).status == 0)
        #expect(try cluster.waitFinal([id], timeout: 90) == ["done"])
        #expect(cluster.sha256("late.bin") == file.sha256)
    }

    @Test("a download resumed after its partial file was removed starts over and ends whole")
    func lostPartialStartsOver() throws {
        let cluster = try Cluster("partial-lost")
        defer { cluster.stopWorkers() }
        let file = try Origin.file("safety/lost/lost.bin", size: 16 * 1_048_576)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "lost.bin", "--segment-size", "2MiB", "--max-attempts", "1"])
        let slow = try cluster.startWorker(["--limit-rate", "4M"])
        let started = try Harness.waitUntil(timeout: 30) { (try cluster.status(id)["bytes_done"] as? Int ?? 0) > 0 }
        try #require(started, "never started: \((try? cluster.status(id)) ?? [:])")
        slow.signal(SIGTERM)
        _ = slow.wait(timeout: 15)
        try FileManager.default.removeItem(atPath: cluster.storage + "/lost.bin.haul-partial")

        // Resumed: the first segment that finds the file gone starts the transfer over, and it ends whole.
        try cluster.startWorker()
        #expect(try cluster.waitFinal([id], timeout: 60) == ["done"])
        #expect(cluster.sha256("lost.bin") == file.sha256)
        let startedOver = try cluster.database.scalar(
            "SELECT count(*) FROM transfer_events WHERE transfer_id = \(id) AND from_state = 'downloading' AND to_state = 'pending'")
        #expect(startedOver == "1")
        #expect(cluster.temporaries().isEmpty, "\(cluster.temporaries())")
    }

    @Test("a finalizer that finds the partial file gone takes a same-size file at the destination for its own only if one set out to publish it")
    func earlierPublishNeedsItsMark() throws {
        let cluster = try Cluster("earlier-publish")
        defer { cluster.stopWorkers() }
        let file = try Origin.file("safety/earlier/same.bin", size: 2 * 1_048_576)
        let id = try cluster.enqueue(Harness.origin + file.path, ["--dest", "same.bin", "--segment-size", "1MiB"])
        let worker = try cluster.startWorker()
        #expect(try cluster.waitFinal([id]) == ["done"])
        worker.signal(SIGTERM)
        _ = worker.wait(timeout: 15)
        // Back to finalizing with the partial file gone, as after a crash between the last segment
        // and the finalizer, and a file of the same size but other bytes at the destination.
        let stranger = Data(repeating: 0x5A, count: 2 * 1_048_576)
        try stranger.write(to: URL(fileURLWithPath: cluster.storage + "/same.bin"))
        _ = try cluster.database.scalar(
            "UPDATE transfers SET state = 'finalizing', published_at = NULL, finished_at = NULL, publishing_generation = NULL WHERE id = \(id)")

        try cluster.startWorker()
        try #require(Harness.waitUntil(timeout: 30) { try cluster.state(id) == "done" && cluster.sha256("same.bin") == file.sha256 })
        #expect(try cluster.database.scalar("SELECT generation FROM transfers WHERE id = \(id)") == "1", "started over")
    }

    @Test(
        "a file put where an interrupted get saves is kept by the rerun (exit 2), named by -o or by the origin; --force overwrites it, and a copy put in place of what haul saved is kept too"
    )
    func getRerunKeepsAFilePutThere() throws {
        let work = Harness.temporaryDirectory("get-put")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("safety/get-put/put.bin", size: 24 * 1_048_576)
        let mine = Data("my own notes\n".utf8)
        for (output, saved) in [(work + "/mine.bin", work + "/mine.bin"), (work + "/", work + "/put.bin")] {
            let database = try TestDatabase()
            let arguments = ["get", Harness.origin + file.path, "-o", output, "--segment-size", "8MiB", "--connections", "1"]
            let first = try Child(Harness.haulBinary, arguments + ["--limit-rate", "4M"], environment: ["DATABASE_URL": database.url])
            let started = Harness.waitUntil(timeout: 20) { ((try? database.scalar("SELECT coalesce(sum(bytes_done), 0) FROM segments")) ?? "0") != "0" }
            first.signal(SIGINT)
            try #require(first.wait(timeout: 20), "the interrupted get did not exit")
            try #require(started, "the first get wrote nothing: \(first.stderr)")
            try mine.write(to: URL(fileURLWithPath: saved))

            let again = try Run.haul(arguments, database: database.url)
            #expect(again.status == 2 && again.stderr.contains("haul did not download it from this URL"), "\(output): \(again.stderr)")
            #expect(contents(saved) == mine, "\(output)")
            let forced = try Run.haul(arguments + ["--force"], database: database.url)
            #expect(forced.status == 0, "\(output): \(forced.stderr)")
            #expect(Origin.sha256(file: saved) == file.sha256, "\(output)")

            // A copy put in place of the file haul saved carries no mark: the history of an
            // earlier get of the URL does not make it haul's.
            try mine.write(to: URL(fileURLWithPath: work + "/copy"))
            try #require(rename(work + "/copy", saved) == 0)
            let over = try Run.haul(arguments, database: database.url)
            #expect(over.status == 2 && over.stderr.contains("haul did not download it from this URL"), "\(output): \(over.stderr)")
            #expect(contents(saved) == mine, "\(output)")
        }
    }

    @Test("a file put where a running get saves is kept: the get checks the name again before it publishes and ends with exit 2")
    func getKeepsAFilePutWhileItRuns() throws {
        let work = Harness.temporaryDirectory("get-during")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("safety/get-during/during.bin", size: 8 * 1_048_576)
        let mine = Data("my own notes\n".utf8)
        for (output, saved) in [(work + "/mine.bin", work + "/mine.bin"), (work + "/", work + "/during.bin")] {
            let database = try TestDatabase()
            let get = try Child(
                Harness.haulBinary, ["get", Harness.origin + file.path, "-o", output, "--connections", "1", "--limit-rate", "4M"],
                environment: ["DATABASE_URL": database.url])
            let started = Harness.waitUntil(timeout: 20) { ((try? database.scalar("SELECT coalesce(sum(bytes_done), 0) FROM segments")) ?? "0") != "0" }
            try mine.write(to: URL(fileURLWithPath: saved))
            try #require(get.wait(timeout: 30), "the get did not end")
            #expect(started, "\(output): the get wrote nothing before the file was put there: \(get.stderr)")
            #expect(get.exitStatus == 2 && get.stderr.contains("haul did not download it from this URL"), "\(output): \(get.stderr)")
            #expect(contents(saved) == mine, "\(output)")
        }
    }

    @Test(
        "a FIFO (like a device, as /dev/null) is never replaced by a get, --force or not: named by -o it is refused before anything is recorded; named by the origin, before it is published"
    )
    func getNeverReplacesSpecialFiles() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("get-special")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("safety/special/pipe.bin", size: 100_000)
        let isFIFO = { (path: String) -> Bool in
            var info = stat()
            return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO
        }
        try #require(mkfifo(work + "/named", 0o644) == 0 && mkfifo(work + "/pipe.bin", 0o644) == 0)

        for extra in [[String](), ["--force"]] {
            let named = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/named"] + extra, database: database.url)
            #expect(named.status == 2 && named.stderr.contains("is a FIFO, not a file; haul never replaces one"), "\(extra): \(named.stderr)")
            #expect(named.stderr.contains("-o - > /dev/null") && named.stderr.split(separator: "\n").count == 1, "\(named.stderr)")
        }
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "0", "a refused -o recorded a transfer")
        let byOrigin = try Run.haul(["get", Harness.origin + file.path, "-o", work + "/", "--force"], database: database.url)
        #expect(byOrigin.status == 2 && byOrigin.stderr.contains("is a FIFO, not a file"), "\(byOrigin.stderr)")
        // Both are as they were; the failed transfer keeps its partial file until `haul cancel`.
        #expect(isFIFO(work + "/named") && isFIFO(work + "/pipe.bin"))
    }

    @Test("a haul get rerun after its partial file was removed starts the file over and saves it whole")
    func getRerunAfterLostPartial() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("get-lost")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("safety/get-lost/lost.bin", size: 24 * 1_048_576)
        let arguments = ["get", "-q", Harness.origin + "/slow" + file.path, "-o", work + "/lost.bin", "--segment-size", "8MiB", "--connections", "1"]
        let first = try Child(Harness.haulBinary, arguments, environment: ["DATABASE_URL": database.url])
        let started = Harness.waitUntil(timeout: 20) { ((try? database.scalar("SELECT coalesce(sum(bytes_done), 0) FROM segments")) ?? "0") != "0" }
        first.signal(SIGINT)
        try #require(first.wait(timeout: 20), "the interrupted get did not exit")
        try #require(started, "the first get wrote nothing: \(first.stderr)")
        try FileManager.default.removeItem(atPath: work + "/lost.bin.haul-partial")

        let again = try Run.haul(arguments, database: database.url)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Origin.sha256(file: work + "/lost.bin") == file.sha256)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work) == ["lost.bin"])
    }

    @Test(
        "in a folder anyone may write (sticky, as /tmp), a partial file another user planted is neither written into nor published",
        .enabled(if: getuid() == 0 && getpwnam("nobody") != nil))
    func plantedPartialFilesAreRefused() throws {
        let database = try TestDatabase()
        let shared = Harness.temporaryDirectory("sticky")
        defer { try? FileManager.default.removeItem(atPath: shared) }
        chmod(shared, 0o1777)
        let small = try Origin.file("planted/small.bin", size: 4096)
        let large = try Origin.file("planted/large.bin", size: 3 * 1_048_576)
        for (file, extra) in [(small, [String]()), (large, ["--segment-size", "1MiB"])] {
            let name = (file.path as NSString).lastPathComponent
            let planted = shared + "/" + name + ".haul-partial"
            let plant = try Run.program(
                "/usr/sbin/runuser", ["-u", "nobody", "--", "/bin/sh", "-c", "echo planted > \"$0\"", planted], environment: [:], directory: "/")
            try #require(plant.status == 0, "\(plant.stderr)")
            let result = try Run.haul(["get", Harness.origin + file.path, "-o", shared + "/" + name] + extra, database: database.url)
            #expect(result.status == 1 && result.stderr.contains("a file of user \(getpwnam("nobody")!.pointee.pw_uid) is already there"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: shared + "/" + name), "the download was published")
            #expect(contents(planted) == Data("planted\n".utf8), "the planted file was written into")
        }
        // A file of this user's own under that name (an earlier attempt's) is used as before.
        try Data("an earlier attempt\n".utf8).write(to: URL(fileURLWithPath: shared + "/own.bin.haul-partial"))
        let again = try Run.haul(["get", Harness.origin + small.path, "-o", shared + "/own.bin"], database: database.url)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Origin.sha256(file: shared + "/own.bin") == small.sha256)
    }

    @Test("haul zip refuses an OUT.zip that exists (exit 2, one line) and leaves it as it was; --force replaces it, but never a FIFO or device")
    func zipKeepsExistingFiles() throws {
        let work = Harness.temporaryDirectory("zip-keep")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try FileManager.default.createDirectory(atPath: work + "/tree", withIntermediateDirectories: true)
        try Data("text\n".utf8).write(to: URL(fileURLWithPath: work + "/tree/a.txt"))
        let mine = Data("my own notes\n".utf8)
        try mine.write(to: URL(fileURLWithPath: work + "/out.zip"))

        let refused = try Run.haul(["zip", work + "/out.zip", work + "/tree"], database: nil)
        #expect(
            refused.status == 2 && refused.stderr.hasPrefix("haul: '\(work)/out.zip' already exists") && refused.stderr.contains("--force"), "\(refused.stderr)"
        )
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(contents(work + "/out.zip") == mine)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).sorted() == ["out.zip", "tree"])

        let forced = try Run.haul(["zip", work + "/out.zip", work + "/tree", "--force"], database: nil)
        #expect(forced.status == 0, "\(forced.stderr)")
        let listing = try Run.program("/usr/bin/unzip", ["-Z1", work + "/out.zip"], environment: [:])
        #expect(listing.stdout == "a.txt\n", "\(listing.stdout) \(listing.stderr)")

        // A FIFO (or a device: `haul zip /dev/null …`) is never replaced, --force or not.
        try #require(mkfifo(work + "/pipe.zip", 0o644) == 0)
        let special = try Run.haul(["zip", work + "/pipe.zip", work + "/tree", "--force"], database: nil)
        #expect(special.status == 2 && special.stderr.contains("is a FIFO, not a file; haul never replaces one"), "\(special.stderr)")
        var info = stat()
        #expect(lstat(work + "/pipe.zip", &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).sorted() == ["out.zip", "pipe.zip", "tree"])
    }

    @Test("-o - writes the file to standard output and nothing to the folder")
    func getToStandardOutput() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("stdout")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let elsewhere = Harness.temporaryDirectory("stdout-out")
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        let file = try Origin.file("safety/stream.bin", size: 2 * 1_048_576 + 17)
        let result = try Run.program(
            "/bin/sh", ["-c", "\"$0\" get \"$1\" -o - --segment-size 1MiB > \"$2\"", Harness.haulBinary, Harness.origin + file.path, elsewhere + "/out.bin"],
            environment: ["DATABASE_URL": database.url], directory: work)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Origin.sha256(file: elsewhere + "/out.bin") == file.sha256)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty)
    }

    // A reader that closes the pipe early (`| head -c 100`) is a normal end: StreamToStandardOutputTests.
    @Test(
        "-o - onto a full device fails with one line saying so",
        arguments: [("> /dev/full", "cannot write the file to standard output: No space left on device")])
    func getToStandardOutputThatFails(redirection: String, message: String) throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("stdout-fails")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("safety/stream-fails.bin", size: 4 * 1_048_576)
        // The shell reports haul's status, not the pipeline's last command's.
        let result = try Run.program(
            "/bin/bash", ["-c", "set -o pipefail; \"$0\" get \"$1\" -o - \(redirection)", Harness.haulBinary, Harness.origin + file.path],
            environment: ["DATABASE_URL": database.url], directory: work)
        #expect(result.status == 1, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("haul: ") && lines[0].contains(message), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty)
    }

    @Test("a rerun with another --checksum uses it instead of failing again; retry of a get points at haul get")
    func rerunWithNewChecksum() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("rerun")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let file = try Origin.file("safety/digest.bin", size: 500_000)
        let target = work + "/digest.bin"
        let wrong = String(repeating: "0", count: 64)
        let first = try Run.haul(["get", Harness.origin + file.path, "-o", target, "--checksum", "sha256:\(wrong)"], database: database.url)
        #expect(first.status == 10, "\(first.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target))
        let listed = try Run.haul(["list", "--json"], database: database.url)
        let id = try #require(listed.stdout.firstMatch(of: /"id"\s*:\s*(\d+)/).map { String($0.1) })
        let retry = try Run.haul(["retry", id], database: database.url)
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(retry.stderr.contains("haul get"), "\(retry.stderr)")

        let second = try Run.haul(["get", Harness.origin + file.path, "-o", target, "--checksum", "sha256:\(file.sha256)"], database: database.url)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(Origin.sha256(file: target) == file.sha256)
    }

    @Test("a second enqueue to a destination an active transfer writes is refused, also per manifest line")
    func oneActiveTransferPerDestination() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("busy")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let first = try Run.haul(["enqueue", Harness.origin + "/safety/a.bin", "--dest", "shared/a.bin"], database: database.url)
        #expect(first.status == 0, "\(first.stderr)")
        let id = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let second = try Run.haul(["enqueue", Harness.origin + "/safety/b.bin", "--dest", "shared/a.bin"], database: database.url)
        #expect(second.status == 2, "\(second.stderr)")
        #expect(second.stderr.contains("transfer \(id)"), "\(second.stderr)")

        let manifest = work + "/manifest.txt"
        try "\(Harness.origin)/safety/c.bin shared/c.bin\n\(Harness.origin)/safety/b.bin shared/a.bin\n".write(
            toFile: manifest, atomically: true, encoding: .utf8)
        let all = try Run.haul(["enqueue", "--manifest", manifest, "--batch", "b1"], database: database.url)
        #expect(all.status == 2, "\(all.stderr)")
        #expect(all.stderr.contains("line 2:") && all.stderr.contains("transfer \(id)"), "\(all.stderr)")
        let skipping = try Run.haul(["enqueue", "--manifest", manifest, "--batch", "b1", "--skip-invalid", "--json"], database: database.url)
        #expect(skipping.status == 0, "\(skipping.stderr)")
        #expect(skipping.stdout.contains("\"inserted\":1") || skipping.stdout.contains("\"inserted\" : 1"), "\(skipping.stdout)")
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "2")
        // The same batch enqueued again is no conflict with itself.
        let repeated = try Run.haul(["enqueue", "--manifest", manifest, "--batch", "b1", "--skip-invalid"], database: database.url)
        #expect(repeated.status == 0, "\(repeated.stderr)")
        #expect(repeated.stdout.contains("0 enqueued, 1 already there, 1 rejected"), "\(repeated.stdout)")
        // Once the first transfer is over, its destination is free again; retrying the first one then is refused.
        #expect(try Run.haul(["cancel", id], database: database.url).status == 0)
        let after = try Run.haul(["enqueue", Harness.origin + "/safety/b.bin", "--dest", "shared/a.bin"], database: database.url)
        #expect(after.status == 0, "\(after.stderr)")
        let retry = try Run.haul(["retry", id], database: database.url)
        #expect(retry.status == 2, "\(retry.stderr)")
        #expect(retry.stderr.contains("already writes 'shared/a.bin'"), "\(retry.stderr)")
    }

    /// A `haul get` of a 48 MiB file `name` from the slow origin into `folder`/big.bin, one
    /// connection: it runs for seconds. - Returns: the get and the partial file it writes.
    /// Enqueues the origin's `path` without `--dest` (4 MiB segments, `extra`), starts a worker
    /// paced to 2 MiB/s, and waits until the origin has named the transfer `name`.
    private func plannedSlowly(_ path: String, named name: String, in cluster: Cluster, _ extra: [String] = []) throws -> Int64 {
        let id = try cluster.enqueue(Harness.origin + path, ["--segment-size", "4MiB"] + extra)
        try cluster.startWorker(["--limit-rate", "2M"])
        let named = try Harness.waitUntil(timeout: 30) { try cluster.status(id)["dest"] as? String == name }
        try #require(named, "never planned: \((try? cluster.status(id)) ?? [:])")
        return id
    }

    /// `haul retry ID` is accepted, and the transfer then fails with `destination-exists`.
    private func retryIsRefused(_ id: Int64, in cluster: Cluster) throws {
        #expect(try cluster.haul(["retry", String(id)]).status == 0)
        #expect(try cluster.waitFinal([id], timeout: 90) == ["failed"])
        let status = try cluster.status(id)
        #expect(status["error_code"] as? String == "destination-exists", "\(status)")
    }

    private func slowGet(_ name: String, into folder: String, database: TestDatabase) throws -> (Child, String) {
        let file = try Origin.file(name, size: 48 * 1_048_576)
        let get = try Child(
            Harness.haulBinary, ["get", Harness.origin + "/slow" + file.path, "-o", folder + "/big.bin", "--connections", "1", "--segment-size", "16MiB"],
            environment: ["DATABASE_URL": database.url])
        return (get, folder + "/big.bin.haul-partial")
    }

    @Test(
        "haul cancel of a get: an interrupted get's partial file is removed by cancel; a running get, which holds its file, removes it as it stops",
        arguments: [false, true])
    func cancelRemovesThePartial(running: Bool) throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory(running ? "cancel-running" : "cancel")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (get, partial) = try slowGet("safety/big.bin", into: work, database: database)
        let started = Harness.waitUntil(timeout: 60) { FileManager.default.fileExists(atPath: partial) }
        if !running {
            get.signal(SIGKILL)
            _ = get.wait(timeout: 10)
        }
        try #require(started, "the get never created its partial file: \(get.stderr)")
        let cancel = try Run.haul(["cancel", try database.scalar("SELECT id FROM transfers")], database: database.url)
        #expect(cancel.status == 0, "\(cancel.stderr)")
        if running {
            #expect(cancel.stderr.contains("left \(partial)"), "\(cancel.stderr)")
            #expect(get.wait(timeout: 30) && get.exitStatus == 1 && get.stderr.contains("canceled"), "\(get.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty)
    }

    @Test("a get killed before it removed its canceled transfer's partial file: cancelling again removes it (exit 0); once removed, cancel is refused")
    func cancelAgainRemovesTheLeftover() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("cancel-again")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (get, partial) = try slowGet("safety/big-again.bin", into: work, database: database)
        // Planned (its plan committed, so the freeze holds no row the cancel must wait for) and writing.
        let writing = Harness.waitUntil(timeout: 60) {
            FileManager.default.fileExists(atPath: partial) && (try? database.scalar("SELECT state FROM transfers")) == "downloading"
        }
        try #require(writing, "no partial file: \(get.stderr)")
        // Frozen, it still holds its file: the cancel leaves the file to it, then it is killed.
        get.signal(SIGSTOP)
        let id = try database.scalar("SELECT id FROM transfers")
        let first = try Run.haul(["cancel", id], database: database.url)
        #expect(first.status == 0 && first.stderr.contains("left \(partial)"), "\(first.stderr)")
        get.signal(SIGKILL)
        _ = get.wait(timeout: 10)
        #expect(FileManager.default.fileExists(atPath: partial), "the killed get removed its file after all")

        let again = try Run.haul(["cancel", id], database: database.url)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("transfer \(id): already canceled; its partial data is removed"), "\(again.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty)
        let third = try Run.haul(["cancel", id], database: database.url)
        #expect(third.status == 1 && third.stderr.contains("canceled"), "\(third.stdout) \(third.stderr)")
    }
}
