import Foundation
import HaulCore
import HaulTestSupport
import Testing

@testable import HaulArchive

/// The pure parts: ZIP64 records past 4 GiB, name rules, tar numbers. Sizes past 4 GiB are tested here as
/// encode/decode round trips rather than with real multi-gigabyte files, to keep the suite fast.
@Suite struct ZipRecordTests {
    private let big = ZipRecordInfo(
        name: Array("huge/disk.img".utf8), method: 8, crc: 0xDEAD_BEEF, compressedSize: 5 << 30, size: 6 << 30,
        localHeaderOffset: 7 << 30, unixMode: 0o100755, modificationTime: 1_700_000_000, zip64InLocalHeader: true)

    @Test func zip64CentralRecordRoundTrips() throws {
        let central = ZipRecordEncoder.centralHeader(big)
        let end = ZipRecordEncoder.endRecords(count: 70_000, directoryOffset: 9 << 30, directorySize: UInt64(central.count))
        let parsed = try CentralEntry.parseDirectory(central, count: 1)
        #expect(parsed.count == 1)
        #expect(parsed[0].size == 6 << 30)
        #expect(parsed[0].compressedSize == 5 << 30)
        #expect(parsed[0].localHeaderOffset == 7 << 30)
        #expect(parsed[0].crc == 0xDEAD_BEEF)
        #expect(parsed[0].modificationTime == 1_700_000_000)
        #expect(parsed[0].unixMode == 0o100755)
        #expect(try parsed[0].decodedName() == "huge/disk.img")

        // A file image: padding stands in for 9 GiB of entries, then the directory and end records.
        let directoryOffset: UInt64 = 9 << 30
        let image = central + end
        let located = try ZipEnd.locate(fileSize: directoryOffset + UInt64(image.count)) { offset, count in
            (0..<count).map { index in
                let position = offset + UInt64(index)
                return position < directoryOffset ? 0 : image[Int(position - directoryOffset)]
            }
        }
        #expect(
            located
                == ZipEnd(
                    entryCount: 70_000, directoryOffset: 9 << 30, directorySize: UInt64(central.count),
                    directoryEnd: (9 << 30) + UInt64(central.count)))
    }

    @Test func zip64LocalHeaderCarriesBothSizes() throws {
        let local = ZipRecordEncoder.localHeader(big)
        var cursor = ByteCursor(local, at: 18, context: "test")
        #expect(try cursor.u32() == UInt32.max)
        #expect(try cursor.u32() == UInt32.max)
        let nameLength = Int(try cursor.u16())
        _ = try cursor.u16()
        try cursor.skip(nameLength)
        #expect(try cursor.u16() == 0x0001)
        #expect(try cursor.u16() == 16)
        #expect(try cursor.u64() == 6 << 30)
        #expect(try cursor.u64() == 5 << 30)
    }

    @Test func smallArchivesHaveNoZip64Records() throws {
        let end = ZipRecordEncoder.endRecords(count: 65_534, directoryOffset: 1000, directorySize: 46)
        #expect(end.count == 22)
        #expect(ZipRecordEncoder.endRecords(count: 65_535, directoryOffset: 1000, directorySize: 46).count == 22 + 56 + 20)
    }

    @Test func aMissingZip64FieldIsCorruption() throws {
        var central = ZipRecordEncoder.centralHeader(big)
        central[30] = 9  // extra length shortened: the zip64 field no longer holds the offset
        let error = #expect(throws: HaulError.self) { try CentralEntry.parseDirectory(Array(central.prefix(46 + 13 + 9)), count: 1) }
        #expect(error?.code == .corruptArchive)
    }

    @Test(arguments: [
        ("a/b.txt", "a/b.txt"), ("./a/./b/", "a/b"), ("dir//file", "dir/file"), ("ab:c/d", "ab:c/d"), ("é/ü", "é/ü"),
    ])
    func namesThatAreKept(name: String, normalized: String) throws {
        #expect(try EntryPath.normalize(name) == normalized)
    }

    // "/" then a combining mark (U+0301) is one Character, not "/": the kernel still cuts there (`PathText`).
    @Test(arguments: ["", "/etc/passwd", "../x", "a/../../x", "a/..", "a\\b", "C:/x", "c:", "a\u{0}b", "../\u{301}x", "/\u{301}x", "a/../\u{301}../x"])
    func namesThatAreRefused(name: String) throws {
        let error = #expect(throws: HaulError.self) { try EntryPath.normalize(name) }
        #expect(error?.code == .unsafeEntryName)
    }

    @Test func ancestorsAreCutAtEverySlash() {
        #expect(EntryPath.ancestors(of: "a/b/c") == ["a", "a/b"])
        #expect(EntryPath.ancestors(of: "a/\u{301}b/c") == ["a", "a/\u{301}b"])
        #expect(EntryPath.ancestors(of: "x").isEmpty)
    }

    @Test func theDestinationItselfIsSkipped() throws {
        #expect(try EntryPath.normalize("./") == nil)
    }

    @Test func codePage437() {
        #expect(EntryPath.decodeCP437([0x63, 0x61, 0x66, 0x82]) == "café")
        #expect(EntryPath.decodeCP437([0xE1, 0xFF]) == "ß\u{00A0}")
    }

    @Test func tarNumbersOctalAndBase256() throws {
        #expect(try TarHeader.number(ArraySlice(Array("0000644 \0".utf8)), "mode") == 0o644)
        #expect(try TarHeader.number(ArraySlice([0x80, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0]), "size") == 8 << 30)
        #expect(throws: HaulError.self) { try TarHeader.number(ArraySlice(Array("12x".utf8)), "size") }
    }

    @Test func paxRecords() throws {
        let records = try TarHeader.parsePax(Array("29 path=a/very/long/name.txt\n11 size=42\n".utf8))
        #expect(records == ["path": "a/very/long/name.txt", "size": "42"])
        #expect(throws: HaulError.self) { try TarHeader.parsePax(Array("99 path=x\n".utf8)) }
    }

    @Test func overlapCheckIsExact() throws {
        let touching = [ZipLayout.Span(start: 0, end: 10, name: "a"), ZipLayout.Span(start: 10, end: 20, name: "b")]
        try ZipLayout.checkOverlaps(touching, directoryStart: 20)
        #expect(throws: HaulError.self) { try ZipLayout.checkOverlaps(touching, directoryStart: 19) }
        let sharing = [ZipLayout.Span(start: 0, end: 11, name: "a"), ZipLayout.Span(start: 10, end: 20, name: "b")]
        #expect(throws: HaulError.self) { try ZipLayout.checkOverlaps(sharing, directoryStart: 30) }
    }
}

/// The staging directory's own guard, under the name rules: the kernel resolves every file it
/// creates beneath it, so a name the rules wrongly passed still cannot leave it.
@Suite struct StagingBeneathTests {
    @Test("a file, folder or link whose name leads out of the staging directory is refused by the kernel, and nothing is made outside")
    func namesThatLeadOut() throws {
        let temp = try TemporaryDirectory()
        let staging = try Staging(destination: temp.sub("dest"))
        defer { staging.discard() }
        for name in ["../outside", "../\u{301}outside", "a/../../outside"] {
            try staging.makeDirectory("a")
            #expect {
                _ = try staging.createFile(name)
            } throws: { error in
                (error as? HaulError)?.code == .unsafeEntryName
            }
        }
        for name in ["../outside", "../\u{301}outside/sub", "a/../../outside"] {
            #expect {
                try staging.makeDirectory(name)
            } throws: { error in
                (error as? HaulError)?.code == .unsafeEntryName
            }
            #expect(staging.makeSymlink(name + "-link", target: "a") == EXDEV)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path).count == 1, "only the staging directory")
        let fd = try staging.createFile("a/inside")
        close(fd)
        #expect(FileManager.default.fileExists(atPath: staging.path("a/inside")))
        try staging.makeDirectory("a/b/c")
        #expect(staging.makeSymlink("a/b/link", target: "../inside") == 0)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: staging.path("a/b/link"))) == "../inside")
    }
}
