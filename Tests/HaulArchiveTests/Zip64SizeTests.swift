import Foundation
import HaulArchive
import HaulTestSupport
import Testing

/// A real entry past 4 GiB through both peers. It writes about 8 GiB to disk and takes a minute, so it runs
/// only with `HAUL_BIG_TESTS=1`; the ZIP64 encoding itself is covered on every run by `ZipRecordTests`.
@Suite struct Zip64SizeTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HAUL_BIG_TESTS"] == "1"))
    func anEntryPast4GiB() throws {
        let temp = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: temp.sub("tree"), withIntermediateDirectories: true)
        let big = temp.sub("tree/sparse.img")
        try #require(FileManager.default.createFile(atPath: big, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
        try handle.seek(toOffset: (4 << 30) + 12_345)
        try handle.write(contentsOf: Data("the end".utf8))
        try handle.close()
        let archive = temp.sub("big.zip")
        let summary = try ZipWriter.create(archive: archive, inputs: [temp.sub("tree")], options: ZipWriteOptions(compression: .deflate(level: 1)))
        #expect(summary.bytes == (4 << 30) + 12_352)
        try runChecked(["unzip", "-tqq", archive])
        let sizes = try run(["python3", "-c", "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).getinfo('sparse.img').file_size)", archive])
        #expect(sizes.output == "\((4 << 30) + 12_352)\n")
        // Zeros deflate about 1000:1, past the default ratio limit: this archive is trusted.
        _ = try Extractor.extract(archive: archive, to: temp.sub("out"), limits: ExtractionLimits(maxSize: 5 << 30, maxRatio: 1 << 20))
        try runChecked(["cmp", big, temp.sub("out/sparse.img")])
    }
}
