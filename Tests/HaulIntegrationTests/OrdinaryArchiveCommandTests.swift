import Foundation
import HaulTestSupport
import Testing

/// What `unzip`, GNU tar, bsdtar and gzip extract without a word, `haul extract` and `haul get
/// --extract` extract with the default limits too, to the same tree: zips from Info-ZIP, Python's
/// zipfile and bsdtar and a tar.gz and a gzip of 64 MiB of zeros (about 1000:1), and a GNU sparse
/// tar of a 1 GiB file holding a few bytes. The archives come from HaulArchiveTests/Fixtures/ordinary.sh.
@Suite("ordinary archives under the default extraction limits")
struct OrdinaryArchiveCommandTests {
    static let kinds = ["infozip.zip", "python.zip", "bsdtar.zip", "zeros.tar.gz", "zeros.bin.gz", "sparse.tar"]

    /// Makes the archive `kind` in a new folder of the origin's document root, with the reference
    /// extraction beside it in `expected/`; returns the folder's path on the origin.
    static func make(_ kind: String) throws -> String {
        let folder = "ordinary-" + UUID().uuidString.prefix(8)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("HaulArchiveTests/Fixtures/ordinary.sh").path
        let made = try Run.program("/bin/sh", [script, kind, Harness.docroot + "/" + folder], environment: [:])
        guard made.status == 0 else { throw TestFailure("ordinary.sh \(kind) failed: \(made.stderr)") }
        return folder
    }

    /// What `diff -r` says between the tool's extraction and `tree` (empty when they are the same).
    static func differences(_ folder: String, _ tree: String) throws -> String {
        let compared = try Run.program("/usr/bin/diff", ["-r", Harness.docroot + "/\(folder)/expected", tree], environment: [:])
        return compared.status == 0 ? "" : "status \(compared.status): \(compared.stdout)\(compared.stderr)"
    }

    @Test("haul extract and haul get --extract into a folder: the tree unzip, tar or gzip extracts", arguments: kinds)
    func extractsAsThePeerToolDoes(_ kind: String) throws {
        let folder = try Self.make(kind)
        defer { try? FileManager.default.removeItem(atPath: Harness.docroot + "/" + folder) }
        let work = Harness.temporaryDirectory("ordinary")
        defer { try? FileManager.default.removeItem(atPath: work) }

        let extracted = try Run.haul(["extract", Harness.docroot + "/\(folder)/\(kind)", work + "/extracted"], database: nil)
        #expect(extracted.status == 0, "\(extracted.stderr)")
        #expect(try Self.differences(folder, work + "/extracted") == "")

        let database = try TestDatabase()
        let got = try Run.haul(["get", Harness.origin + "/\(folder)/\(kind)", "-o", work + "/got/\(kind)", "--extract"], database: database.url)
        #expect(got.status == 0, "\(got.stderr)")
        let base = [".zip", ".tar.gz", ".tar", ".gz"].compactMap { kind.hasSuffix($0) ? String(kind.dropLast($0.count)) : nil }.first ?? kind
        #expect(try Self.differences(folder, work + "/got/\(base)") == "")
        #expect(try database.scalar("SELECT state FROM transfers") == "done")
    }
}
