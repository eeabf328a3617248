import Foundation
import HaulArchive
import HaulTestSupport
import Testing

/// tar, tar.gz and gz written by GNU tar, gzip and Python extract to exactly their source.
@Suite struct TarGzipTests {
    /// A tree with names past ustar's 100 and 255 byte limits, so pax and GNU long-name records are used.
    private func makeLongNameTree(at root: String) throws -> String {
        try makeSampleTree(at: root)
        let deep = (0..<6).map { "directory-with-a-long-name-\($0)" }.joined(separator: "/")
        try FileManager.default.createDirectory(atPath: "\(root)/\(deep)", withIntermediateDirectories: true)
        let name = "\(deep)/\(String(repeating: "f", count: 120)).txt"
        try Data("long name\n".utf8).write(to: URL(fileURLWithPath: "\(root)/\(name)"))
        return name
    }

    @Test func pythonPaxTarGzWithLongNames() throws {
        let temp = try TemporaryDirectory()
        _ = try makeLongNameTree(at: temp.sub("tree"))
        try runChecked(["python3", fixture("peers.py"), "tar-pax", temp.sub("tree"), temp.sub("pax.tgz")])
        #expect(try ArchiveFormat.detect(path: temp.sub("pax.tgz")) == .tarGzip)
        let summary = try Extractor.extract(archive: temp.sub("pax.tgz"), to: temp.sub("out"))
        #expect(summary.format == .tarGzip)
        #expect(try snapshot(temp.sub("out")) == snapshot(temp.sub("tree")))
    }

    @Test(arguments: [["-czf"], ["-cf"], ["--format=pax", "-czf"], ["--format=ustar", "-cf"]])
    func gnuTar(flags: [String]) throws {
        let temp = try TemporaryDirectory()
        if flags.contains("--format=ustar") { try makeSampleTree(at: temp.sub("tree")) } else { _ = try makeLongNameTree(at: temp.sub("tree")) }
        let archive = temp.sub("archive.bin")
        try runChecked(["tar"] + flags + [archive, "-C", temp.sub("tree"), "."])
        let summary = try Extractor.extract(archive: archive, to: temp.sub("out"))
        #expect(summary.format == (flags.contains("-czf") ? .tarGzip : .tar))
        #expect(try snapshot(temp.sub("out")) == snapshot(temp.sub("tree")))
    }

    @Test func singleGzipTakesTheStoredName() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        try runChecked(["sh", "-c", "gzip -c \"$0\" > \"$1\"", temp.sub("tree/docs/readme.txt"), temp.sub("download.bin")])
        #expect(try ArchiveFormat.detect(path: temp.sub("download.bin")) == .gzip)
        let summary = try Extractor.extract(archive: temp.sub("download.bin"), to: temp.sub("out"))
        #expect(summary.files == 1)
        #expect(
            FileManager.default.contents(atPath: temp.sub("out/readme.txt")) == FileManager.default.contents(atPath: temp.sub("tree/docs/readme.txt"))
        )
    }

    @Test func concatenatedGzipMembersAreOneFile() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        try runChecked(["python3", fixture("peers.py"), "gzip", temp.sub("tree/docs/readme.txt"), temp.sub("a.gz")])
        try runChecked(["python3", fixture("peers.py"), "gzip", temp.sub("tree/data/random.bin"), temp.sub("b.gz")])
        try runChecked(["sh", "-c", "cat \"$0\" \"$1\" > \"$2\"", temp.sub("a.gz"), temp.sub("b.gz"), temp.sub("both.gz")])
        let summary = try Extractor.extract(archive: temp.sub("both.gz"), to: temp.sub("out"))
        let expected =
            try Data(contentsOf: URL(fileURLWithPath: temp.sub("tree/docs/readme.txt")))
            + Data(contentsOf: URL(fileURLWithPath: temp.sub("tree/data/random.bin")))
        #expect(summary.bytes == Int64(expected.count))
        #expect(FileManager.default.contents(atPath: temp.sub("out/a")) == expected, "named after the first member's stored name")
    }

    @Test func concatenatedTarGzMembersAreOneTar() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        try runChecked([
            "sh", "-c", "tar -cf - -C \"$0\" . | head -c 300000 | gzip > \"$1\"; tar -cf - -C \"$0\" . | tail -c +300001 | gzip >> \"$1\"",
            temp.sub("tree"), temp.sub("two.tgz"),
        ])
        _ = try Extractor.extract(archive: temp.sub("two.tgz"), to: temp.sub("out"))
        #expect(try snapshot(temp.sub("out")) == snapshot(temp.sub("tree")))
    }
}
