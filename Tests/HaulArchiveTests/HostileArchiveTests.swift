import Foundation
import HaulArchive
import HaulCore
import HaulTestSupport
import Testing

/// One archive of the corpus Fixtures/hostile.py writes, and how Haul must refuse it.
struct HostileCase: Sendable, CustomTestStringConvertible {
    var file: String
    var code: HaulError.Code
    var allowSymlinks = false
    var limits = ExtractionLimits()

    var testDescription: String { "\(file) → \(code)" }
}

/// Every hostile archive is refused as a whole: the stable code, no destination, nothing beside it.
@Suite struct HostileArchiveTests {
    static let cases: [HostileCase] = [
        HostileCase(file: "absolute.zip", code: "unsafe-entry-name"),
        HostileCase(file: "dotdot.zip", code: "unsafe-entry-name"),
        HostileCase(file: "dotdot-inner.zip", code: "unsafe-entry-name"),
        HostileCase(file: "dotdot-combining.zip", code: "unsafe-entry-name"),
        HostileCase(file: "absolute-combining.zip", code: "unsafe-entry-name"),
        HostileCase(file: "backslash.zip", code: "unsafe-entry-name"),
        HostileCase(file: "drive.zip", code: "unsafe-entry-name"),
        HostileCase(file: "nul.zip", code: "unsafe-entry-name"),
        HostileCase(file: "empty-name.zip", code: "unsafe-entry-name"),
        HostileCase(file: "duplicate.zip", code: "duplicate-entry"),
        HostileCase(file: "duplicate-dotted.zip", code: "duplicate-entry"),
        HostileCase(file: "file-then-child.zip", code: "duplicate-entry"),
        HostileCase(file: "symlink.zip", code: "symlink-refused"),
        HostileCase(file: "symlink-absolute.zip", code: "unsafe-symlink", allowSymlinks: true),
        HostileCase(file: "symlink-chain.zip", code: "unsafe-symlink", allowSymlinks: true),
        HostileCase(file: "symlink-chain-file.zip", code: "unsafe-entry-name", allowSymlinks: true),
        HostileCase(file: "symlink-dotdot.zip", code: "unsafe-symlink", allowSymlinks: true),
        HostileCase(file: "symlink-combining.zip", code: "unsafe-symlink", allowSymlinks: true),
        HostileCase(file: "overlap-shared.zip", code: "overlapping-entries"),
        HostileCase(file: "overlap-spans.zip", code: "overlapping-entries"),
        HostileCase(file: "overlap-directory.zip", code: "overlapping-entries"),
        HostileCase(file: "name-mismatch.zip", code: "header-mismatch"),
        HostileCase(file: "method-mismatch.zip", code: "header-mismatch"),
        HostileCase(file: "size-mismatch.zip", code: "header-mismatch"),
        HostileCase(file: "dot-with-data.zip", code: "unsafe-entry-name"),
        HostileCase(file: "inflates-past-size.zip", code: "zip-bomb"),
        HostileCase(file: "declares-past-deflate.zip", code: "zip-bomb"),
        HostileCase(file: "crc-mismatch.zip", code: "corrupt-archive"),
        HostileCase(file: "unsupported-method.zip", code: "unsupported-method"),
        HostileCase(file: "encrypted.zip", code: "encrypted-entry"),
        HostileCase(file: "large.zip", code: "too-large", limits: ExtractionLimits(maxSize: 5000)),
        HostileCase(file: "many.zip", code: "too-many-entries", limits: ExtractionLimits(maxEntries: 3)),
        HostileCase(file: "trailing-junk.zip", code: "corrupt-archive"),
        HostileCase(file: "truncated.zip", code: "corrupt-archive"),
        HostileCase(file: "pk-garbage.zip", code: "corrupt-archive"),
        HostileCase(file: "garbage.bin", code: "unknown-format"),
        HostileCase(file: "dotdot.tar", code: "unsafe-entry-name"),
        HostileCase(file: "dotdot-combining.tar", code: "unsafe-entry-name"),
        HostileCase(file: "absolute.tar.gz", code: "unsafe-entry-name"),
        HostileCase(file: "symlink.tar", code: "symlink-refused"),
        HostileCase(file: "symlink-chain.tar", code: "unsafe-symlink", allowSymlinks: true),
        HostileCase(file: "hardlink.tar", code: "unsupported-entry"),
        HostileCase(file: "fifo.tar", code: "unsupported-entry"),
        HostileCase(file: "dot-with-data.tar", code: "unsafe-entry-name"),
        HostileCase(file: "duplicate.tar.gz", code: "duplicate-entry"),
        HostileCase(file: "truncated.tar.gz", code: "corrupt-archive"),
        HostileCase(file: "trailing-garbage.gz", code: "corrupt-archive"),
    ]

    @Test(arguments: cases)
    func refusedAsAWhole(_ hostile: HostileCase) throws {
        let temp = try TemporaryDirectory()
        try runChecked(["python3", fixture("hostile.py"), temp.sub("corpus")])
        let parent = temp.sub("work/inner")
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        let destination = "\(parent)/dest"
        let error = extractionError {
            _ = try Extractor.extract(
                archive: temp.sub("corpus/\(hostile.file)"), to: destination, limits: hostile.limits, allowSymlinks: hostile.allowSymlinks)
        }
        #expect(error?.code == hostile.code, "\(error.map(String.init(describing:)) ?? "no error")")
        #expect(error?.message.isEmpty == false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent).isEmpty, "no destination and no staging left")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.sub("work")) == ["inner"])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/haul-evil"))
    }

    @Test func theCorpusIsCompleteAndEveryCaseHasAnExpectation() throws {
        let temp = try TemporaryDirectory()
        try runChecked(["python3", fixture("hostile.py"), temp.path])
        let written = Set(try FileManager.default.contentsOfDirectory(atPath: temp.path))
        #expect(written == Set(Self.cases.map(\.file)))
    }

    @Test func aNonEmptyDestinationIsNeverTouched() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        _ = try ZipWriter.create(archive: temp.sub("a.zip"), inputs: [temp.sub("tree")])
        try FileManager.default.createDirectory(atPath: temp.sub("dest"), withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: temp.sub("dest/keep.txt")))
        let error = extractionError { _ = try Extractor.extract(archive: temp.sub("a.zip"), to: temp.sub("dest")) }
        #expect(error?.code == "destination-not-empty")
        #expect(try snapshot(temp.sub("dest"), modes: false) == ["keep.txt": .file(Data("mine".utf8), executable: false)])
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path).sorted() == ["a.zip", "dest", "tree"])
    }

    @Test func anEmptyDestinationDirectoryIsFilled() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        _ = try ZipWriter.create(archive: temp.sub("a.zip"), inputs: [temp.sub("tree")])
        try FileManager.default.createDirectory(atPath: temp.sub("dest"), withIntermediateDirectories: true)
        _ = try Extractor.extract(archive: temp.sub("a.zip"), to: temp.sub("dest"))
        #expect(try snapshot(temp.sub("dest")) == snapshot(temp.sub("tree")))
    }

    @Test func safeSymlinksAreCreatedWhenAllowed() throws {
        let temp = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: temp.sub("tree/sub"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: temp.sub("tree/file")))
        try FileManager.default.createSymbolicLink(atPath: temp.sub("tree/sub/up"), withDestinationPath: "../file")
        try FileManager.default.createSymbolicLink(atPath: temp.sub("tree/here"), withDestinationPath: ".")
        try FileManager.default.createSymbolicLink(atPath: temp.sub("tree/dangling"), withDestinationPath: "sub/missing")
        try runChecked(["tar", "-cf", temp.sub("links.tar"), "-C", temp.sub("tree"), "."])
        let summary = try Extractor.extract(archive: temp.sub("links.tar"), to: temp.sub("out"), allowSymlinks: true)
        #expect(summary.symlinks == 3)
        #expect(try snapshot(temp.sub("out")) == snapshot(temp.sub("tree")))
    }
}
