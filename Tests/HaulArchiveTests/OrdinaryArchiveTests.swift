import Foundation
import HaulCore
import HaulTestSupport
import Testing

@testable import HaulArchive

/// The default limits accept every archive that Info-ZIP, Python's zipfile, bsdtar, GNU tar and gzip
/// make from ordinary data, however compressible (64 MiB of zeros deflate about 1030:1, a sparse
/// file is mostly holes), and extract what those tools extract. Fixtures/ordinary.sh makes them.
@Suite struct OrdinaryArchiveTests {
    static let kinds = ["infozip.zip", "python.zip", "bsdtar.zip", "zeros.tar.gz", "zeros.bin.gz", "sparse.tar"]

    @Test("a highly compressible archive from an ordinary tool extracts with the defaults to what that tool extracts", arguments: kinds)
    func extractsWithTheDefaults(_ kind: String) throws {
        let temp = try TemporaryDirectory()
        try runChecked(["sh", fixture("ordinary.sh"), kind, temp.sub("made")])
        let summary = try Extractor.extract(archive: temp.sub("made/\(kind)"), to: temp.sub("out"))
        #expect(summary.files == 1)
        let compared = try run(["diff", "-r", temp.sub("made/expected"), temp.sub("out")])
        #expect(compared.status == 0, "haul's extraction differs from the tool's: \(compared.output)")
        if kind == "sparse.tar" {
            var info = stat()
            #expect(stat(temp.sub("out/disk.img"), &info) == 0 && info.st_size == 1 << 30)
            #expect(Int64(info.st_blocks) * 512 < 1 << 20, "the holes stay holes: \(info.st_blocks) blocks")
        }
    }

    @Test("a sparse file's holes count against a size limit only where they are written out as zeros and the limit was asked for")
    func sparseHolesCountOnlyWhereWrittenOutUnderALimitAskedFor() throws {
        let temp = try TemporaryDirectory()
        try runChecked(["sh", fixture("ordinary.sh"), "sparse.tar", temp.sub("made")])
        let archive = temp.sub("made/sparse.tar")
        // On disk, a limit far below the file's 1 GiB but above its stored bytes lets it through.
        _ = try Extractor.extract(archive: archive, to: temp.sub("out"), limits: ExtractionLimits(maxSize: 1 << 20))
        // A sink without holes (S3) receives 1 GiB of zeros from 10 KiB: the default total, a
        // multiple of the archive's size, bounds stored data only, so GNU tar's archive extracts.
        let file = try InputFile(path: archive)
        let extracted = try Extractor.extract(
            stream: FileSource(file), name: "sparse.tar", size: file.size, spool: open(temp.sub("spool"), O_RDWR | O_CREAT | O_EXCL, 0o600),
            into: DiscardingSink())
        #expect(extracted.summary.bytes == 1 << 30)
        // A total asked for (a worker's ceiling on S3) counts the zeros written for the holes.
        let error = extractionError {
            _ = try Extractor.extract(
                stream: FileSource(file), name: "sparse.tar", size: file.size,
                spool: open(temp.sub("spool2"), O_RDWR | O_CREAT | O_EXCL, 0o600), into: DiscardingSink(), limits: ExtractionLimits(maxSize: 512 << 20))
        }
        #expect(error?.code == .tooLarge, "\(error.map(String.init(describing:)) ?? "no error")")
    }
}

/// A sink without holes (as an object store) that keeps nothing it is given.
private final class DiscardingSink: EntrySink, @unchecked Sendable {
    let names = EntryNames()
    let concurrency = 1
    let keepsHoles = false

    func makeDirectory(_ path: String, modificationTime: Int64?) throws { try names.claimDirectory(path) }

    func createFile(_ path: String, sizeBound: Int64, executable: Bool, modificationTime: Int64) throws -> any EntryWriter {
        try names.claimFile(path)
        return DiscardingFile()
    }

    func createSymlink(_ path: String, target: String) throws { Issue.record("no symlink expected") }
}

private final class DiscardingFile: EntryWriter {
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {}
    func finish(size: Int64) throws {}
    func abort() {}
}
