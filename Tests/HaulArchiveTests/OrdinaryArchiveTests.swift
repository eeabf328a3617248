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

    @Test("a sparse file's holes do not count against the size limit on disk, but do where they are written out as zeros")
    func sparseHolesCountOnlyWhereWrittenOut() throws {
        let temp = try TemporaryDirectory()
        try runChecked(["sh", fixture("ordinary.sh"), "sparse.tar", temp.sub("made")])
        let archive = temp.sub("made/sparse.tar")
        // On disk, a limit far below the file's 1 GiB but above its stored bytes lets it through.
        _ = try Extractor.extract(archive: archive, to: temp.sub("out"), limits: ExtractionLimits(maxSize: 1 << 20))
        // A sink without holes (S3) would receive 1 GiB of zeros from 20 KiB: past the default total.
        let file = try InputFile(path: archive)
        let error = extractionError {
            _ = try Extractor.extract(
                stream: FileSource(file), name: "sparse.tar", size: file.size, spool: open(temp.sub("spool"), O_RDWR | O_CREAT | O_EXCL, 0o600),
                into: DiscardingSink())
        }
        #expect(error?.code == .tooLarge, "\(error.map(String.init(describing:)) ?? "no error")")
        #expect(error?.hint?.contains("sparse") == true, "\(error?.hint ?? "")")
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
