import Foundation
import HaulArchive
import HaulTestSupport
import Testing

/// Archives written by Info-ZIP and Python's zipfile extract to exactly the tree they were made from.
@Suite struct ZipInteropTests {
    private func roundTrip(_ make: (String, String) throws -> Void, name: String) throws {
        let temp = try TemporaryDirectory()
        let source = temp.sub("source")
        try makeSampleTree(at: source)
        let archive = temp.sub(name)
        try make(source, archive)
        #expect(try ArchiveFormat.detect(path: archive) == .zip)
        let summary = try Extractor.extract(archive: archive, to: temp.sub("out"))
        #expect(try snapshot(temp.sub("out")) == snapshot(source))
        #expect(summary.files == 6)
        let expectedBytes = try snapshot(source).values.reduce(0) { total, node in
            guard case .file(let data, _) = node else { return total }
            return total + data.count
        }
        #expect(summary.bytes == Int64(expectedBytes))
    }

    @Test func infoZipDeflate() throws {
        try roundTrip({ source, archive in try runChecked(["zip", "-q", "-r", "-6", archive, "."], in: source) }, name: "infozip.zip")
    }

    @Test func infoZipStored() throws {
        try roundTrip({ source, archive in try runChecked(["zip", "-q", "-r", "-0", archive, "."], in: source) }, name: "stored.zip")
    }

    @Test func pythonDeflate() throws {
        try roundTrip({ source, archive in try runChecked(["python3", fixture("peers.py"), "zip", source, archive]) }, name: "py.zip")
    }

    @Test func pythonForcedZip64() throws {
        try roundTrip({ source, archive in try runChecked(["python3", fixture("peers.py"), "zip64", source, archive]) }, name: "py64.zip")
    }

    @Test func pythonDataDescriptorsFromAPipe() throws {
        try roundTrip(
            { source, archive in
                try runChecked(["sh", "-c", "python3 \"$0\" zip-stream \"$1\" | cat > \"$2\"", fixture("peers.py"), source, archive])
            }, name: "stream.zip")
    }

    @Test func dataDescriptorsWithoutSignature() throws {
        let temp = try TemporaryDirectory()
        try runChecked(["python3", fixture("peers.py"), "zip-unsigned-descriptors", temp.sub("unsigned.zip")])
        try runChecked(["unzip", "-tq", temp.sub("unsigned.zip")])
        _ = try Extractor.extract(archive: temp.sub("unsigned.zip"), to: temp.sub("out"))
        #expect(try String(contentsOfFile: temp.sub("out/dir/second.txt"), encoding: .utf8) == String(repeating: "second entry\n", count: 70))
        #expect(try String(contentsOfFile: temp.sub("out/first.txt"), encoding: .utf8) == String(repeating: "first entry\n", count: 50))
    }

    @Test func commentAfterTheEndRecordIsAccepted() throws {
        try roundTrip(
            { source, archive in
                try runChecked(["zip", "-q", "-r", archive, "."], in: source)
                try runChecked(["sh", "-c", "echo 'a comment with PK bytes' | zip -q -z \"$0\"", archive])
            }, name: "comment.zip")
    }

    @Test func moreThan65535EntriesBothWays() throws {
        let temp = try TemporaryDirectory()
        let archive = temp.sub("many.zip")
        try runChecked(["python3", fixture("peers.py"), "zip-many", archive, "65600"])
        let summary = try Extractor.extract(archive: archive, to: temp.sub("out"))
        #expect(summary.files == 65_600)
        #expect(summary.directories == 0)
        #expect(try String(contentsOfFile: temp.sub("out/d07/f65507"), encoding: .utf8) == "65507")

        let again = temp.sub("again.zip")
        let written = try ZipWriter.create(archive: again, inputs: [temp.sub("out")], options: ZipWriteOptions())
        #expect(written.entries == 65_700)
        #expect(try run(["python3", fixture("peers.py"), "count", again]).output == "65700\n")
        try runChecked(["unzip", "-tqq", again])
    }
}
