import Foundation
import HaulTestSupport
import Testing

/// `haul extract`, `zip` and `upload` given a path that cannot be what it names: a bad argument,
/// as `get -i missing.txt` is. Exit status 2, one line naming the path and what to give instead,
/// nothing written, before any work; an archive that is read and found wrong is a failure (1).
@Suite("path arguments")
struct PathArgumentTests {
    @Test("a missing, wrong-kind or unreadable ARCHIVE, PATH or FILE, or a folder that is not there, is exit 2 with one line")
    func badPaths() throws {
        let work = Harness.temporaryDirectory("path-arguments")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try FileManager.default.createDirectory(atPath: work + "/full", withIntermediateDirectories: false)
        try Data("kept\n".utf8).write(to: URL(fileURLWithPath: work + "/full/kept.txt"))
        try Data("plain text\n".utf8).write(to: URL(fileURLWithPath: work + "/notes.txt"))
        let made = try Run.haul(["zip", work + "/good.zip", work + "/notes.txt"], database: nil)
        #expect(made.status == 0, "\(made.stderr)")
        let before = try FileManager.default.contentsOfDirectory(atPath: work).sorted()

        let cases: [(words: [String], says: String)] = [
            (["extract", work + "/missing.zip", work + "/out"], "cannot read ARCHIVE '\(work)/missing.zip': No such file or directory"),
            (["extract", work + "/full", work + "/out"], "ARCHIVE '\(work)/full' is a directory, not a file"),
            (["extract", work + "/good.zip", work + "/full"], "the destination '\(work)/full' exists and is not an empty directory"),
            (["extract", work + "/good.zip", work + "/notes.txt"], "the destination '\(work)/notes.txt' exists and is not an empty directory"),
            (["extract", work + "/good.zip", work + "/nowhere/out"], "cannot create DEST '\(work)/nowhere/out': the folder '\(work)/nowhere' does not exist"),
            (
                ["extract", work + "/good.zip", work + "/notes.txt/out"],
                "cannot create DEST '\(work)/notes.txt/out': '\(work)/notes.txt' is a file, not a folder"
            ),
            (["zip", work + "/new.zip", work + "/notes.txt", work + "/missing"], "cannot read PATH '\(work)/missing': No such file or directory"),
            (
                ["zip", work + "/nowhere/new.zip", work + "/notes.txt"],
                "cannot create OUT.zip '\(work)/nowhere/new.zip': the folder '\(work)/nowhere' does not exist"
            ),
            (["upload", work + "/missing.bin", "http://127.0.0.1:9/up"], "cannot read FILE '\(work)/missing.bin': No such file or directory"),
            (["upload", work + "/full", "http://127.0.0.1:9/up"], "FILE '\(work)/full' is a directory, not a file"),
        ]
        for (words, says) in cases {
            let result = try Run.haul(words, database: nil)
            #expect(
                result.status == 2 && result.stderr.hasPrefix("haul: \(says)") && result.stderr.split(separator: "\n").count == 1, "\(words): \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).sorted() == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work + "/full") == ["kept.txt"])

        // A file that is there but is no archive was read and found wrong: a failure, not a bad argument.
        let notArchive = try Run.haul(["extract", work + "/notes.txt", work + "/out"], database: nil)
        #expect(notArchive.status == 1 && notArchive.stderr.contains("is not a zip, tar, tar.gz or gz archive"), "\(notArchive.stderr)")

        // Files this user may not read (root reads anything, so another user runs it).
        if getuid() == 0, getpwnam("nobody") != nil {
            let haul = try Harness.haulBinaryForOtherUsers()
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: work + "/good.zip")
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: work)
            // That user reaches the folder: a file it may read gets as far as being read.
            let reached = try Run.program(
                "/usr/sbin/runuser", ["-u", "nobody", "--", haul, "extract", work + "/notes.txt", work + "/out"], environment: [:], directory: "/",
                timeout: 60)
            #expect(reached.status == 1 && reached.stderr.contains("is not a zip, tar, tar.gz or gz archive"), "\(reached.stderr)")
            for (words, says) in [
                (["extract", work + "/good.zip", work + "/out"], "cannot read ARCHIVE '\(work)/good.zip': Permission denied"),
                (["upload", work + "/good.zip", "http://127.0.0.1:9/up"], "cannot read FILE '\(work)/good.zip': Permission denied"),
            ] {
                let result = try Run.program("/usr/sbin/runuser", ["-u", "nobody", "--", haul] + words, environment: [:], directory: "/", timeout: 60)
                #expect(
                    result.status == 2 && result.stderr.hasPrefix("haul: \(says)") && result.stderr.split(separator: "\n").count == 1,
                    "\(words): \(result.stderr)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: work).sorted() == before)
        }
    }
}
