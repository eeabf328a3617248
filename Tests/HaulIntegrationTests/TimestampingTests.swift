import Foundation
import HaulTestSupport
import Testing

/// `haul get -N`, as `wget -N`: a file already there is fetched again only when the origin's
/// copy is newer, judged by its modification time when no earlier transfer recorded validators.
@Suite("get -N (timestamping)")
struct TimestampingTests {
    /// Sets a file's modification time to `seconds` since the epoch.
    static func setModified(_ path: String, _ seconds: Int) throws {
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: TimeInterval(seconds))], ofItemAtPath: path)
    }

    @Test("a file newer than the origin's is kept untouched (nginx answers 200 to a non-exact If-Modified-Since); an older one is replaced")
    func newerKeptOlderReplaced() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("timestamping")
        let served = try Origin.file("cli/stamp-\(UUID().uuidString.prefix(6)).bin", size: 300_000)
        let local = directory + "/" + URL(fileURLWithPath: served.path).lastPathComponent
        try Data("mine, and newer than the origin's\n".utf8).write(to: URL(fileURLWithPath: local))
        // The origin's file was written just now; a local copy from the future is newer.
        try Self.setModified(local, Int(Date().timeIntervalSince1970) + 3600)

        let refused = try Run.haul(["get", Harness.origin + served.path], database: database.url, directory: directory)
        #expect(refused.status == 2, "without -N or --force a file haul did not write stays: \(refused.stderr)")

        let kept = try Run.haul(["get", "-N", Harness.origin + served.path], database: database.url, directory: directory)
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(try String(contentsOfFile: local, encoding: .utf8) == "mine, and newer than the origin's\n", "the newer file is untouched")
        #expect(Origin.requests(for: served.path).count >= 1, "the origin was asked")
        #expect(kept.stderr.contains("\(local) is up to date: unchanged at the origin"), "not 'saved': \(kept.stderr)")
        #expect(!kept.stderr.contains("saved "), "\(kept.stderr)")

        try Self.setModified(local, 946_684_800)  // 2000-01-01: older than the origin's copy
        let replaced = try Run.haul(["get", "--timestamping", Harness.origin + served.path], database: database.url, directory: directory)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(Origin.sha256(file: local) == served.sha256, "the older file was replaced by the origin's")
        #expect(replaced.stderr.contains("saved \(local) (293.0 KiB)"), "\(replaced.stderr)")
    }

    @Test("-N over a list: the probe batch keeps the newer files at its first try, dropping the origin's 200 bodies")
    func batchKeepsNewerFiles() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("timestamping-batch")
        let folder = "cli/stamps-\(UUID().uuidString.prefix(6))"
        let served = try (0..<3).map { index in try Origin.file("\(folder)/f\(index).bin", size: 5_000 + index) }
        let list = directory + "/list.txt"
        try served.map { Harness.origin + $0.path + "\n" }.joined().write(toFile: list, atomically: true, encoding: .utf8)
        for index in served.indices {
            let local = directory + "/f\(index).bin"
            try Data("mine\n".utf8).write(to: URL(fileURLWithPath: local))
            try Self.setModified(local, Int(Date().timeIntervalSince1970) + 3600)
        }
        let kept = try Run.haul(["get", "-N", "-i", list, "-o", directory + "/", "--json"], database: database.url, directory: directory)
        #expect(kept.status == 0, "\(kept.stderr)")
        let results = (try JSONSerialization.jsonObject(with: Data(kept.stdout.utf8)) as? [String: Any])?["transfers"] as? [[String: Any]]
        #expect(results?.map { $0["unchanged"] as? Bool } == [true, true, true], "\(kept.stdout)")
        for index in served.indices {
            #expect(try String(contentsOfFile: directory + "/f\(index).bin", encoding: .utf8) == "mine\n", "f\(index).bin is untouched")
        }
        #expect(try database.scalar("SELECT max(attempts) FROM transfers") == "1", "no probe failed and was retried: \(kept.stderr)")
        #expect(try database.scalar("SELECT count(*) FROM transfers WHERE unchanged") == "3")
    }

    @Test("-N with nothing to compare with is refused before anything is written")
    func refusals() throws {
        let database = try TestDatabase()
        let noName = try Run.haul(["get", "-N", Harness.origin + "/"], database: database.url)
        #expect(noName.status == 2 && noName.stderr.contains("-o FILE"), "\(noName.stderr)")
        let toStdout = try Run.haul(["get", "-N", Harness.origin + "/x.bin", "-o", "-"], database: database.url)
        #expect(toStdout.status == 2, "\(toStdout.stderr)")
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "0")
    }
}
