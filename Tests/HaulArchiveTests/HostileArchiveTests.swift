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
        HostileCase(file: "absolute.zip", code: .unsafeEntryName),
        HostileCase(file: "dotdot.zip", code: .unsafeEntryName),
        HostileCase(file: "dotdot-inner.zip", code: .unsafeEntryName),
        HostileCase(file: "dotdot-combining.zip", code: .unsafeEntryName),
        HostileCase(file: "absolute-combining.zip", code: .unsafeEntryName),
        HostileCase(file: "backslash.zip", code: .unsafeEntryName),
        HostileCase(file: "drive.zip", code: .unsafeEntryName),
        HostileCase(file: "nul.zip", code: .unsafeEntryName),
        HostileCase(file: "empty-name.zip", code: .unsafeEntryName),
        HostileCase(file: "duplicate.zip", code: .duplicateEntry),
        HostileCase(file: "duplicate-dotted.zip", code: .duplicateEntry),
        HostileCase(file: "file-then-child.zip", code: .duplicateEntry),
        HostileCase(file: "symlink.zip", code: .symlinkRefused),
        HostileCase(file: "symlink-absolute.zip", code: .unsafeSymlink, allowSymlinks: true),
        HostileCase(file: "symlink-chain.zip", code: .unsafeSymlink, allowSymlinks: true),
        HostileCase(file: "symlink-chain-file.zip", code: .unsafeEntryName, allowSymlinks: true),
        HostileCase(file: "symlink-dotdot.zip", code: .unsafeSymlink, allowSymlinks: true),
        HostileCase(file: "symlink-combining.zip", code: .unsafeSymlink, allowSymlinks: true),
        HostileCase(file: "overlap-shared.zip", code: .overlappingEntries),
        HostileCase(file: "overlap-spans.zip", code: .overlappingEntries),
        HostileCase(file: "overlap-directory.zip", code: .overlappingEntries),
        HostileCase(file: "name-mismatch.zip", code: .headerMismatch),
        HostileCase(file: "method-mismatch.zip", code: .headerMismatch),
        HostileCase(file: "size-mismatch.zip", code: .headerMismatch),
        HostileCase(file: "dot-with-data.zip", code: .unsafeEntryName),
        HostileCase(file: "inflates-past-size.zip", code: .zipBomb),
        HostileCase(file: "declares-past-deflate.zip", code: .zipBomb),
        HostileCase(file: "crc-mismatch.zip", code: .corruptArchive),
        HostileCase(file: "unsupported-method.zip", code: .unsupportedMethod),
        HostileCase(file: "encrypted.zip", code: .encryptedEntry),
        HostileCase(file: "large.zip", code: .tooLarge, limits: ExtractionLimits(maxSize: 5000)),
        HostileCase(file: "many.zip", code: .tooManyEntries, limits: ExtractionLimits(maxEntries: 3)),
        HostileCase(file: "trailing-junk.zip", code: .corruptArchive),
        HostileCase(file: "truncated.zip", code: .corruptArchive),
        HostileCase(file: "pk-garbage.zip", code: .corruptArchive),
        HostileCase(file: "garbage.bin", code: .unknownFormat),
        HostileCase(file: "dotdot.tar", code: .unsafeEntryName),
        HostileCase(file: "dotdot-combining.tar", code: .unsafeEntryName),
        HostileCase(file: "absolute.tar.gz", code: .unsafeEntryName),
        HostileCase(file: "symlink.tar", code: .symlinkRefused),
        HostileCase(file: "symlink-chain.tar", code: .unsafeSymlink, allowSymlinks: true),
        HostileCase(file: "hardlink.tar", code: .unsupportedEntry),
        HostileCase(file: "fifo.tar", code: .unsupportedEntry),
        HostileCase(file: "dot-with-data.tar", code: .unsafeEntryName),
        HostileCase(file: "duplicate.tar.gz", code: .duplicateEntry),
        HostileCase(file: "truncated.tar.gz", code: .corruptArchive),
        HostileCase(file: "trailing-garbage.gz", code: .corruptArchive),
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
        #expect(error?.code == .destinationNotEmpty)
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
