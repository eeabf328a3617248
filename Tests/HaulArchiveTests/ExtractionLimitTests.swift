import Foundation
import HaulArchive
import HaulCore
import HaulTestSupport
import Testing

/// Archives cannot fill the volume they are extracted to: by default an archive may expand to 1032 times
/// its size (deflate's ceiling) and a compressed entry only as far as a ratio limit allows when one is
/// given, whatever is asked never leaves less than a reserve free, and a refusal leaves nothing behind.
/// Bombs come from Fixtures/bombs.py.
@Suite struct ExtractionLimitTests {
    @Test func theTotalDefaultsToDeflatesCeilingTimesTheArchiveAndNeverEatsTheReserve() {
        let gib: Int64 = 1 << 30
        let defaults = ExtractionLimits()
        #expect(defaults.maxRatio == nil, "no ratio limit unless asked for")
        #expect(defaults.resolvedMaxSize(archiveSize: 1 << 20, free: 100 * gib, fileSystemSize: 200 * gib) == 1032 << 20)
        // Capped by the free space less 5 % of the file system (at most 1 GiB).
        #expect(defaults.resolvedMaxSize(archiveSize: gib, free: 50 * gib, fileSystemSize: 200 * gib) == 49 * gib)
        #expect(defaults.resolvedMaxSize(archiveSize: 1 << 20, free: 60 << 20, fileSystemSize: 64 << 20) == (60 << 20) - (64 << 20) / 20)
        #expect(ExtractionLimits(maxSize: 10 * gib).resolvedMaxSize(archiveSize: 1, free: 5 * gib, fileSystemSize: 10 * gib) == 5 * gib - gib / 2)
        #expect(defaults.resolvedMaxSize(archiveSize: Int64.max / 2, free: Int64.max, fileSystemSize: 0) == Int64.max)
        #expect(defaults.resolvedMaxSize(archiveSize: 1, free: 10, fileSystemSize: 1 << 20) == 0)
    }

    @Test(arguments: ["zeros.tar.gz", "zeros.zip", "zeros.gz"])
    func zerosAreRefusedUnderARatioLimitGivenExplicitly(_ file: String) throws {
        let temp = try TemporaryDirectory()
        try runChecked(["python3", fixture("bombs.py"), temp.sub("bombs"), "40"])
        try FileManager.default.createDirectory(atPath: temp.sub("work"), withIntermediateDirectories: true)
        let error = extractionError {
            _ = try Extractor.extract(archive: temp.sub("bombs/\(file)"), to: temp.sub("work/out"), limits: ExtractionLimits(maxRatio: 200))
        }
        #expect(error?.code == .compressionRatio, "\(error.map(String.init(describing:)) ?? "no error")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.sub("work")).isEmpty, "no destination and no staging left")
        // Under a total given explicitly, refused as too large.
        let capped = extractionError {
            _ = try Extractor.extract(archive: temp.sub("bombs/\(file)"), to: temp.sub("work/out"), limits: ExtractionLimits(maxSize: 10 << 20))
        }
        #expect(capped?.code == .tooLarge, "\(capped.map(String.init(describing:)) ?? "no error")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.sub("work")).isEmpty, "no destination and no staging left")
        // With the defaults it is what zip, tar and gzip make of 40 MiB of zeros, and goes through.
        let summary = try Extractor.extract(archive: temp.sub("bombs/\(file)"), to: temp.sub("work/trusted"))
        #expect(summary.bytes == 40 << 20)
    }

    @Test func paxRecordsSpreadOverManyHeadersAreBounded() throws {
        let temp = try TemporaryDirectory()
        try runChecked(["python3", fixture("bombs.py"), temp.sub("bombs"), "1"])
        let error = extractionError { _ = try Extractor.extract(archive: temp.sub("bombs/pax-flood.tar"), to: temp.sub("out")) }
        #expect(error?.code == .corruptArchive, "\(error.map(String.init(describing:)) ?? "no error")")
        #expect(!FileManager.default.fileExists(atPath: temp.sub("out")))
    }

    @Test(
        "a bomb against a small tmpfs volume: refused before it fills it, nothing left, whatever limits are asked for",
        .enabled(if: getuid() == 0))
    func aBombCannotFillASmallVolume() throws {
        let temp = try TemporaryDirectory()
        let volume = temp.sub("volume")
        try FileManager.default.createDirectory(atPath: volume, withIntermediateDirectories: true)
        try runChecked(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", volume])
        defer { _ = try? run(["umount", volume]) }
        try runChecked(["python3", fixture("bombs.py"), temp.sub("small"), "40"])
        try runChecked(["python3", fixture("bombs.py"), temp.sub("large"), "200"])
        let free = try Self.freeSpace(volume)

        // A ratio limit asked for: 40 MiB from 40 KiB would fit the volume, but is far past 200:1.
        var error = extractionError {
            _ = try Extractor.extract(archive: temp.sub("small/zeros.tar.gz"), to: volume + "/small", limits: ExtractionLimits(maxRatio: 200))
        }
        #expect(error?.code == .compressionRatio, "\(error.map(String.init(describing:)) ?? "no error")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: volume).isEmpty, "no destination and no staging left")

        // The default limits, and limits raised far past the volume: capped by its free space less the
        // reserve, refused as too large (not by a full disk), and the space is given back.
        for (file, limits) in ["zeros.tar.gz", "zeros.zip", "zeros.gz"].flatMap({ [($0, ExtractionLimits()), ($0, ExtractionLimits(maxSize: 1 << 40))] }) {
            error = extractionError {
                _ = try Extractor.extract(archive: temp.sub("large/\(file)"), to: volume + "/large", limits: limits)
            }
            #expect(error?.code == .tooLarge, "\(file): \(error.map(String.init(describing:)) ?? "no error")")
            #expect(error?.hint?.contains("free space") == true, "\(error?.hint ?? "")")
            #expect(try FileManager.default.contentsOfDirectory(atPath: volume).isEmpty, "no destination and no staging left")
            #expect(try Self.spaceComesBack(volume, to: free), "free space \((try? Self.freeSpace(volume)) ?? -1), before \(free)")
        }
    }

    /// Whether `path`'s free space is `free` again within 10 s. A removed file's blocks are freed
    /// when its last descriptor closes, and a process another test spawns at that moment holds a
    /// copy of every descriptor until it execs: the space comes back a moment later, not never.
    static func spaceComesBack(_ path: String, to free: Int64) throws -> Bool {
        for _ in 0..<100 {
            if try freeSpace(path) == free { return true }
            usleep(100_000)
        }
        return false
    }

    static func freeSpace(_ path: String) throws -> Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { throw POSIXError(.EIO) }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}
