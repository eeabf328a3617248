import Foundation
import HaulTestSupport
import Testing

/// A published file carries the SHA-256 of its URL (`user.haul.source`), so that Haul knows its
/// own older copy after `haul prune` deleted the transfer that wrote it, and still never takes
/// another URL's file, or a user's, for its own.
@Suite("source mark")
struct SourceMarkTests {
    /// The mark on the file at `path`, read by Python (`os.getxattr`, no symlink followed).
    private func mark(_ path: String) throws -> String {
        let script = "import os, sys\ntry: print(os.getxattr(sys.argv[1], 'user.haul.source', follow_symlinks=False).decode())\nexcept OSError: print('')"
        return try Run.program("/usr/bin/python3", ["-c", script, path], environment: [:]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func sha256(of text: String) -> String { Origin.sha256(Data(text.utf8)) }

    @Test("haul get run again after haul prune replaces its own file (named by -o or by the origin); another URL's get and a symlink still meet a refusal")
    func getAfterPrune() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("mark-get")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let url = Harness.origin + (try Origin.file("mark/get/data.bin", size: 300_000)).path
        for words in [[String](), ["-o", work + "/named.bin"]] {
            let path = words.isEmpty ? work + "/data.bin" : work + "/named.bin"
            let first = try Run.haul(["get", "-q", url] + words, database: database.url, directory: work)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(try mark(path) == sha256(of: url), "the mark is the URL's SHA-256, never the URL")
            let pruned = try Run.haul(["prune", "--older-than", "0s"], database: database.url)
            #expect(pruned.status == 0, "\(pruned.stderr)")
            let newer = try Origin.file("mark/get/data.bin", size: 310_000)
            let again = try Run.haul(["get", "-q", url] + words, database: database.url, directory: work)
            #expect(again.status == 0, "\(words): \(again.stderr)")
            #expect(Origin.sha256(file: path) == newer.sha256)
            _ = try Origin.file("mark/get/data.bin", size: 300_000)
        }
        // Another URL the origin names alike did not write data.bin: it stays.
        let kept = Origin.sha256(file: work + "/data.bin")
        let other = Harness.origin + (try Origin.file("mark/get/other/data.bin", size: 1000)).path
        let refused = try Run.haul(["get", "-q", other], database: database.url, directory: work)
        #expect(refused.status == 2 && refused.stderr.contains("did not download it from this URL"), "\(refused.stderr)")
        #expect(Origin.sha256(file: work + "/data.bin") == kept)
        // A symlink named like the file never counts as the file, whatever its target carries.
        try FileManager.default.moveItem(atPath: work + "/data.bin", toPath: work + "/real.bin")
        try FileManager.default.createSymbolicLink(atPath: work + "/data.bin", withDestinationPath: "real.bin")
        let linked = try Run.haul(["get", "-q", url], database: database.url, directory: work)
        #expect(linked.status == 2, "\(linked.stderr)")
        #expect(Origin.sha256(file: work + "/real.bin") == kept)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work + "/data.bin") == "real.bin")
    }

    @Test("a URL's fragment is not part of it: get of URL#part replaces the file get of URL saved, and marks it as URL's")
    func fragment() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("mark-fragment")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let url = Harness.origin + (try Origin.file("mark/fragment/pkg.bin", size: 5000)).path
        let first = try Run.haul(["get", "-q", url], database: database.url, directory: work)
        #expect(first.status == 0, "\(first.stderr)")
        let newer = try Origin.file("mark/fragment/pkg.bin", size: 6000)
        let again = try Run.haul(["get", "-q", url + "#sha256=0f"], database: database.url, directory: work)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Origin.sha256(file: work + "/pkg.bin") == newer.sha256)
        #expect(try mark(work + "/pkg.bin") == sha256(of: url))
        #expect(try database.scalar("SELECT count(*) FROM transfers WHERE url LIKE '%#%'") == "0", "no URL is recorded with its fragment")
    }

    static let fleetSizes: [(size: Int, extra: [String])] = [(4000, []), (3 * 1_048_576, ["--segment-size", "1MiB"])]

    @Test(
        "a fleet re-mirror of a URL the origin names replaces its own file after haul prune (a small file's batch, a segmented file's finalizer); another URL named alike is refused",
        arguments: fleetSizes)
    func fleetAfterPrune(size: Int, extra: [String]) throws {
        let cluster = try Cluster("mark-fleet")
        defer { cluster.stopWorkers() }
        let file = try Origin.file("mark/fleet-\(size)/a/mirrored.bin", size: size)
        let url = Harness.origin + file.path
        try cluster.startWorker()
        let first = try cluster.enqueue(url, extra)
        #expect(try cluster.waitFinal([first]) == ["done"])
        #expect(try mark(cluster.storage + "/mirrored.bin") == sha256(of: url))
        let pruned = try cluster.haul(["prune", "--older-than", "0s"])
        #expect(pruned.status == 0, "\(pruned.stderr)")

        let newer = try Origin.file("mark/fleet-\(size)/a/mirrored.bin", size: size + 500)
        let again = try cluster.enqueue(url, extra)
        let states = try cluster.waitFinal([again])
        let error = try cluster.status(again)["error"] as? String ?? ""
        #expect(states == ["done"], "\(error)")
        #expect(cluster.sha256("mirrored.bin") == newer.sha256)

        let other = try Origin.file("mark/fleet-\(size)/b/mirrored.bin", size: size)
        let refused = try cluster.enqueue(Harness.origin + other.path, extra)
        #expect(try cluster.waitFinal([refused]) == ["failed"])
        #expect(try cluster.status(refused)["error_code"] as? String == "destination-exists")
        #expect(cluster.sha256("mirrored.bin") == newer.sha256)
    }
}
