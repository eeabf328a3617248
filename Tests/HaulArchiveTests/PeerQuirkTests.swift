import Foundation
import HaulArchive
import HaulCore
import HaulTestSupport
import Testing

/// What GNU tar, bsdtar and Info-ZIP write or accept beyond the plain formats: Haul extracts the same
/// bytes they do, or refuses with a clear reason; it never writes wrong bytes.
@Suite struct PeerQuirkTests {
    /// A file with data at its start, in its middle and at its end, and holes between; one all hole.
    private func makeSparseTree(at root: String) throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var rng = SplitMix64(seed: 7)
        let disk = try FileHandle(forWritingTo: URL(fileURLWithPath: try create(root + "/disk.img")))
        for (offset, count) in [(0, 5000), (1 << 20, 70_000), (3 << 20, 4096), ((5 << 20) - 10, 10)] {
            try disk.seek(toOffset: UInt64(offset))
            try disk.write(contentsOf: Data(rng.bytes(count)))
        }
        try disk.close()
        let holes = try FileHandle(forWritingTo: URL(fileURLWithPath: try create(root + "/holes.img")))
        try holes.truncate(atOffset: 2 << 20)
        try holes.close()
        try Data("plain\n".utf8).write(to: URL(fileURLWithPath: root + "/plain.txt"))
    }

    private func create(_ path: String) throws -> String {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw HaulError(.internal, "cannot create \(path)") }
        return path
    }

    @Test(
        "GNU sparse tar formats extract to the real file, as GNU tar and bsdtar extract them",
        arguments: [
            ["--format=pax", "--sparse-version=0.0"], ["--format=pax", "--sparse-version=0.1"],
            ["--format=pax", "--sparse-version=1.0"], ["--format=gnu"],
        ])
    func gnuSparse(flags: [String]) throws {
        let temp = try TemporaryDirectory()
        try makeSparseTree(at: temp.sub("tree"))
        try runChecked(["tar", "--sparse", "-cf", temp.sub("sparse.tar")] + flags + ["-C", temp.sub("tree"), "."])
        try FileManager.default.createDirectory(atPath: temp.sub("gnu"), withIntermediateDirectories: true)
        try runChecked(["tar", "-xf", temp.sub("sparse.tar"), "-C", temp.sub("gnu")])
        try FileManager.default.createDirectory(atPath: temp.sub("bsd"), withIntermediateDirectories: true)
        try runChecked(["bsdtar", "-xf", temp.sub("sparse.tar"), "-C", temp.sub("bsd")])
        let summary = try Extractor.extract(archive: temp.sub("sparse.tar"), to: temp.sub("out"))
        #expect(summary.files == 3)
        #expect(summary.bytes == (5 << 20) + (2 << 20) + 6)
        let ours = try snapshot(temp.sub("out"))
        #expect(ours == (try snapshot(temp.sub("gnu"))))
        #expect(ours == (try snapshot(temp.sub("bsd"))))
        #expect(ours == (try snapshot(temp.sub("tree"))))
    }

    @Test func aSparseMapReachingPastTheFilesEndIsRefused() throws {
        let temp = try TemporaryDirectory()
        try makeSparseTree(at: temp.sub("tree"))
        try runChecked(["tar", "--sparse", "--format=pax", "--sparse-version=0.1", "-cf", temp.sub("sparse.tar"), "-C", temp.sub("tree"), "disk.img"])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: temp.sub("sparse.tar")))
        // The pax record keeps its length; the last chunk now ends one byte past the real size.
        let range = try #require(bytes.range(of: Data("GNU.sparse.size=5242880\n".utf8)))
        bytes.replaceSubrange(range, with: Data("GNU.sparse.size=5242879\n".utf8))
        try bytes.write(to: URL(fileURLWithPath: temp.sub("bad.tar")))
        let error = extractionError { _ = try Extractor.extract(archive: temp.sub("bad.tar"), to: temp.sub("out")) }
        #expect(error?.code == HaulError.Code.corruptArchive, "\(error.map(String.init(describing:)) ?? "")")
        #expect(!FileManager.default.fileExists(atPath: temp.sub("out")))
    }

    @Test func aTarWithoutItsEndOfArchiveBlocksIsRead() throws {
        let temp = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: temp.sub("tree/sub"), withIntermediateDirectories: true)
        try Data(repeating: 0x61, count: 1000).write(to: URL(fileURLWithPath: temp.sub("tree/sub/a.txt")))
        try runChecked(["tar", "--format=ustar", "-cf", temp.sub("full.tar"), "-C", temp.sub("tree"), "sub"])
        // sub/ (one header) and sub/a.txt (a header and two data blocks): everything after is end-of-archive padding.
        let whole = try Data(contentsOf: URL(fileURLWithPath: temp.sub("full.tar")))
        try whole.prefix(4 * 512).write(to: URL(fileURLWithPath: temp.sub("cut.tar")))
        for peer in [["tar", "-tf"], ["bsdtar", "-tf"]] { try runChecked(peer + [temp.sub("cut.tar")]) }
        let summary = try Extractor.extract(archive: temp.sub("cut.tar"), to: temp.sub("out"))
        #expect(summary.files == 1)
        #expect(try snapshot(temp.sub("out")) == snapshot(temp.sub("tree")))
        try whole.prefix(4 * 512 - 100).write(to: URL(fileURLWithPath: temp.sub("truncated.tar")))
        let error = extractionError { _ = try Extractor.extract(archive: temp.sub("truncated.tar"), to: temp.sub("out2")) }
        #expect(error?.code == HaulError.Code.corruptArchive)
    }

    @Test(arguments: [false, true])
    func aSelfExtractingZipIsRead(offsetsFixed: Bool) throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        try runChecked(["zip", "-qr", temp.sub("plain.zip"), "."], in: temp.sub("tree"))
        var stub = Data("#!/bin/sh\necho 'this would unpack itself'\nexit 0\n".utf8)
        stub.append(Data(repeating: 0x7F, count: 3000))
        try (stub + Data(contentsOf: URL(fileURLWithPath: temp.sub("plain.zip")))).write(to: URL(fileURLWithPath: temp.sub("sfx")))
        if offsetsFixed { try runChecked(["zip", "-qA", temp.sub("sfx")]) }
        // unzip warns about the stub when the offsets were not fixed (exit 1) and reads it all the same.
        let tested = try run(["unzip", "-t", temp.sub("sfx")])
        #expect(tested.status <= 1 && tested.output.contains("No errors detected"), "\(tested.output)")
        #expect(try ArchiveFormat.detect(path: temp.sub("sfx")) == .zip)
        _ = try Extractor.extract(archive: temp.sub("sfx"), to: temp.sub("out"))
        #expect(try snapshot(temp.sub("out")) == snapshot(temp.sub("tree")))
    }

    @Test func infoZipStandardInputEntryIsARegularFile() throws {
        let temp = try TemporaryDirectory()
        var rng = SplitMix64(seed: 3)
        let content = Data(rng.bytes(200_000)) + Data(repeating: 0x20, count: 100_000)
        try content.write(to: URL(fileURLWithPath: temp.sub("input.bin")))
        try runChecked(["sh", "-c", "cat \"$0\" | zip -q - - | cat > \"$1\"", temp.sub("input.bin"), temp.sub("piped.zip")])
        let listing = try run(["zipinfo", temp.sub("piped.zip")])
        #expect(listing.output.contains("prw"), "zip - - records a FIFO mode: \(listing.output)")
        _ = try Extractor.extract(archive: temp.sub("piped.zip"), to: temp.sub("out"))
        #expect(try snapshot(temp.sub("out")) == ["-": .file(content, executable: false)])
    }

    @Test func aDataDescriptorThatDisagreesWithTheCentralDirectoryIsRefused() throws {
        let temp = try TemporaryDirectory()
        try Data(repeating: 0x41, count: 5000).write(to: URL(fileURLWithPath: temp.sub("input.bin")))
        try runChecked(["sh", "-c", "cat \"$0\" | zip -q - - | cat > \"$1\"", temp.sub("input.bin"), temp.sub("piped.zip")])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: temp.sub("piped.zip")))
        let descriptor = try #require(bytes.range(of: Data([0x50, 0x4B, 0x07, 0x08])))
        // The descriptor's uncompressed size (after signature, CRC and compressed size) is the last field.
        let sizeField = descriptor.lowerBound + 4 + 4 + sizeWidth(bytes)
        bytes[sizeField] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: temp.sub("bad.zip")))
        let error = extractionError { _ = try Extractor.extract(archive: temp.sub("bad.zip"), to: temp.sub("out")) }
        #expect(error?.code == HaulError.Code.headerMismatch, "\(error.map(String.init(describing:)) ?? "")")
    }

    @Test func aSplitZipGetsItsOwnMessage() throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        try runChecked(["zip", "-qr", "-s", "64k", temp.sub("split.zip"), "."], in: temp.sub("tree"))
        #expect(FileManager.default.fileExists(atPath: temp.sub("split.z01")))
        for part in ["split.zip", "split.z01"] {
            let error = extractionError { _ = try Extractor.extract(archive: temp.sub(part), to: temp.sub("out")) }
            #expect(error?.message.contains("multi-disk archives are not supported") == true, "\(part): \(error.map(String.init(describing:)) ?? "")")
            #expect(error?.hint?.contains("zip -s 0") == true)
        }
    }

    /// Info-ZIP writes an 8-byte (ZIP64) compressed size in the descriptor when the local header has a ZIP64 extra.
    private func sizeWidth(_ bytes: Data) -> Int {
        let extraLength = Int(bytes[28]) | Int(bytes[29]) << 8
        let nameLength = Int(bytes[26]) | Int(bytes[27]) << 8
        let extra = bytes[(30 + nameLength)..<(30 + nameLength + extraLength)]
        return extra.starts(with: [0x01, 0x00]) ? 8 : 4
    }
}
