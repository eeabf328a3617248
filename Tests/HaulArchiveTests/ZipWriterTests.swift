import Foundation
import HaulArchive
import HaulCore
import HaulTestSupport
import Testing

/// Archives from `ZipWriter` pass `unzip -t` and extract with Python's zipfile to the same tree.
@Suite struct ZipWriterTests {
    @Test(arguments: [
        ZipWriteOptions(), ZipWriteOptions(compression: .store), ZipWriteOptions(compression: .deflate(level: 1)),
        ZipWriteOptions(compression: .deflate(level: 9)),
    ])
    func peersReadWhatWeWrite(options: ZipWriteOptions) throws {
        let temp = try TemporaryDirectory()
        let source = temp.sub("source")
        try makeSampleTree(at: source)
        let archive = temp.sub("ours.zip")
        let summary = try ZipWriter.create(archive: archive, inputs: [source], options: options)
        #expect(summary.files == 6)
        #expect(summary.entries == 14)
        try runChecked(["unzip", "-tq", archive])
        try runChecked(["python3", fixture("peers.py"), "extract", archive, temp.sub("python")])
        #expect(try snapshot(temp.sub("python")) == snapshot(source))
        try runChecked(["unzip", "-q", archive, "-d", temp.sub("infozip")])
        #expect(try snapshot(temp.sub("infozip")) == snapshot(source))
        _ = try Extractor.extract(archive: archive, to: temp.sub("ours"))
        #expect(try snapshot(temp.sub("ours")) == snapshot(source))
    }

    @Test func fileArgumentsAreStoredByBaseNameNextToDirectoryContents() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        let archive = temp.sub("mixed.zip")
        _ = try ZipWriter.create(archive: archive, inputs: [temp.sub("tree/docs/readme.txt"), temp.sub("tree/bin/")])
        let listing = try run(["unzip", "-Z1", archive]).output.split(separator: "\n").map(String.init)
        #expect(listing == ["readme.txt", "run.sh"])
    }

    @Test func twoInputsWithOneNameAreRefusedAndNothingIsWritten() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: temp.sub("run.sh")))
        let error = extractionError {
            _ = try ZipWriter.create(archive: temp.sub("out.zip"), inputs: [temp.sub("run.sh"), temp.sub("tree/bin")])
        }
        #expect(error?.code == .duplicateEntry)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path).sorted() == ["run.sh", "tree"])
    }

    @Test func aMissingInputLeavesNoArchiveAndNoTemporaryFile() throws {
        let temp = try TemporaryDirectory()
        let error = extractionError { _ = try ZipWriter.create(archive: temp.sub("out.zip"), inputs: [temp.sub("missing")]) }
        #expect(error?.code == .io)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path).isEmpty)
    }

    @Test func symlinksAreStoredAsSymlinksAndComeBackOnlyWhenAllowed() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        try FileManager.default.createSymbolicLink(atPath: temp.sub("tree/docs/link"), withDestinationPath: "readme.txt")
        let archive = temp.sub("links.zip")
        _ = try ZipWriter.create(archive: archive, inputs: [temp.sub("tree")])
        #expect(extractionError { _ = try Extractor.extract(archive: archive, to: temp.sub("refused")) }?.code == .symlinkRefused)
        #expect(!FileManager.default.fileExists(atPath: temp.sub("refused")))
        let summary = try Extractor.extract(archive: archive, to: temp.sub("out"), allowSymlinks: true)
        #expect(summary.symlinks == 1)
        #expect(try snapshot(temp.sub("out")) == snapshot(temp.sub("tree")))
    }

    @Test func anExistingFileIsLeftAsItWasUnlessReplaceIsAsked() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        let mine = Data("my own notes, not an archive\n".utf8)
        try mine.write(to: URL(fileURLWithPath: temp.sub("out.zip")))
        let error = extractionError { _ = try ZipWriter.create(archive: temp.sub("out.zip"), inputs: [temp.sub("tree")]) }
        #expect(error?.code == .destinationExists)
        #expect(error?.message == "'\(temp.sub("out.zip"))' already exists; haul zip left it as it was")
        #expect(FileManager.default.contents(atPath: temp.sub("out.zip")) == mine)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path).sorted() == ["out.zip", "tree"])
        // A symbolic link of that name is an existing entry too: neither followed nor replaced.
        try FileManager.default.createSymbolicLink(atPath: temp.sub("link.zip"), withDestinationPath: temp.sub("out.zip"))
        #expect(extractionError { _ = try ZipWriter.create(archive: temp.sub("link.zip"), inputs: [temp.sub("tree")]) }?.code == .destinationExists)
        #expect(FileManager.default.contents(atPath: temp.sub("out.zip")) == mine)

        _ = try ZipWriter.create(archive: temp.sub("out.zip"), inputs: [temp.sub("tree")], options: ZipWriteOptions(replace: true))
        try runChecked(["unzip", "-tq", temp.sub("out.zip")])
    }

    @Test func theArchiveNeverContainsItself() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        _ = try ZipWriter.create(archive: temp.sub("tree/self.zip"), inputs: [temp.sub("tree")])
        _ = try ZipWriter.create(archive: temp.sub("tree/self.zip"), inputs: [temp.sub("tree")], options: ZipWriteOptions(replace: true))
        let listing = try run(["unzip", "-Z1", temp.sub("tree/self.zip")]).output
        #expect(listing.contains("self.zip") == false)
    }
}
