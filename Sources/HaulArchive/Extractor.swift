import HaulCore

/// Limits that make a hostile or mistaken archive fail before it fills the disk.
///
/// Both the total and the free-space cap apply whatever is asked for: an archive never leaves less than
/// `reserve(fileSystemSize:)` free on the destination's file system. The defaults accept every archive
/// that zip, tar and gzip make from ordinary data; bombs are caught by what no such archive does
/// (overlapping zip entries, entries inflating past or declaring more than deflate could give them).
public struct ExtractionLimits: Sendable, Equatable {
    /// The most bytes the archive may expand to; `nil` means `deflateCeiling` times the archive's size.
    public var maxSize: Int64?
    /// The most a compressed entry may expand, as a multiple of its compressed size: each zip entry, and
    /// the whole gzip stream of a `.gz` or `.tar.gz`. Entries under `ratioFloor` bytes are not judged.
    /// `nil` (the default) judges none: deflate's own ceiling bounds them.
    public var maxRatio: Int64?
    /// The most entries (files, directories and symlinks) the archive may hold.
    public var maxEntries: Int

    /// The most deflate can expand its input: 258 bytes for each match of at least 2 bits (a 1-bit
    /// length code and a 1-bit distance code), 1032 bytes per byte read. A run of zeros compresses about
    /// 1030:1, so no zip entry, gzip stream or archive of deflated data expands past this; it is the
    /// default total, as a multiple of the archive's size.
    public static let deflateCeiling: Int64 = 1032
    /// Entries (or gzip output) smaller than this are never refused for their ratio alone.
    public static let ratioFloor: Int64 = 1 << 20

    /// Creates limits; the defaults are `deflateCeiling` times the archive's size, no ratio limit, one
    /// million entries.
    public init(maxSize: Int64? = nil, maxRatio: Int64? = nil, maxEntries: Int = 1_000_000) {
        self.maxSize = maxSize
        self.maxRatio = maxRatio
        self.maxEntries = maxEntries
    }

    /// Space an extraction always leaves free: 5 % of the file system, at most 1 GiB.
    public static func reserve(fileSystemSize: Int64) -> Int64 {
        min(fileSystemSize / 20, 1 << 30)
    }

    /// The total in bytes for an archive of `archiveSize` bytes on a file system with `free` bytes available
    /// to unprivileged users out of `fileSystemSize`: the asked-for (or default) total, capped by the free
    /// space less the reserve. Pure.
    public func resolvedMaxSize(archiveSize: Int64, free: Int64, fileSystemSize: Int64) -> Int64 {
        max(0, min(askedMaxSize(archiveSize: archiveSize), free - Self.reserve(fileSystemSize: fileSystemSize)))
    }

    /// `maxSize`, or else `deflateCeiling` times `archiveSize` (saturating). Pure.
    public func askedMaxSize(archiveSize: Int64) -> Int64 {
        if let maxSize { return maxSize }
        let (product, overflow) = archiveSize.multipliedReportingOverflow(by: Self.deflateCeiling)
        return overflow ? Int64.max : product
    }
}

/// Limits with the size resolved to a number of bytes.
struct Limits {
    var maxSize: Int64
    var maxEntries: Int
    var maxRatio: Int64? = nil
    /// Whether a sparse entry's holes count against `maxSize` where the sink writes them out as
    /// zeros (`EntrySink.keepsHoles` false): only under a total that was asked for. The default
    /// total is a multiple of the archive's size, which bounds what deflate can give but says
    /// nothing of holes: a 1 GiB disk image of a few bytes is a 10 KiB GNU sparse tar.
    var holesCount = true
    /// Why `maxSize` is what it is, for the refusal's hint.
    var sizeHint = "raise the limit (--max-size, --extract-max-size) if the archive is trusted"
}

/// What an extraction produced, for printing.
public struct ExtractionSummary: Sendable, Equatable {
    /// The format detected from the archive's content.
    public var format: ArchiveFormat
    /// Regular files written.
    public var files = 0
    /// Directories created from entries (not counting implied parents).
    public var directories = 0
    /// Symlinks created (only with `allowSymlinks`).
    public var symlinks = 0
    /// Bytes of file content written.
    public var bytes: Int64 = 0

    /// Files, directories and symlinks together.
    public var entries: Int { files + directories + symlinks }

    /// An empty summary for `format`.
    public init(format: ArchiveFormat) { self.format = format }
}

/// Safe extraction of zip, tar, tar.gz and gz archives into a new directory.
public enum Extractor {
    /// Where `--extract` writes when `--extract-to` is not given: the file's name without its archive extension.
    public static func defaultFolder(for dest: String) -> String {
        for suffix in [".tar.gz", ".tgz", ".zip", ".tar", ".gz"] {
            if let base = dest.droppingASCIISuffix(suffix), !base.isEmpty { return String(base) }
        }
        return dest + ".d"
    }

    /// Extracts `archive` into `destination`, all or nothing.
    ///
    /// The format is detected from the content. Everything is written into a fresh `.haul-extract-*`
    /// directory next to `destination` and renamed into place only when every entry is complete and
    /// verified; on any error the staging directory is removed and `destination` is left as it was.
    /// `destination` must not exist or be an empty directory. A single `.gz` file becomes one file inside
    /// `destination`, named after the name stored in the gzip header or else the archive's name minus `.gz`.
    ///
    /// Blocks the calling thread (call it from a dedicated thread, not the cooperative pool); zip entries
    /// are inflated on up to eight threads of its own. Prints nothing.
    ///
    /// - Parameters:
    ///   - limits: refuse the archive past these totals and ratios (`too-large`, `too-many-entries`,
    ///     `compression-ratio`); the total is always capped by the free space less a reserve.
    ///   - allowSymlinks: create symlink entries (last, and only if they resolve inside `destination`, each
    ///     when created and all of them again once every link is in place); otherwise any symlink entry
    ///     refuses the archive (`symlink-refused`).
    /// - Throws: `HaulError` with one of the archive codes (`ArchiveError.swift`).
    public static func extract(
        archive: String, to destination: String, limits: ExtractionLimits = ExtractionLimits(), allowSymlinks: Bool = false
    ) throws -> ExtractionSummary {
        let file = try InputFile(path: archive)
        let format = try ArchiveFormat.detect(file)
        let staging = try Staging(destination: destination)
        do {
            let resolved = resolve(limits, archiveSize: Int64(file.size), space: staging.space())
            let summary = try run(file, format: format, sink: staging, limits: resolved, allowSymlinks: allowSymlinks)
            try SymlinkGuard.verifyAll(in: staging)
            try staging.publish()
            return summary
        } catch {
            staging.discard()
            throw error
        }
    }

    /// Extracts `archive` into `sink` under the same rules as `extract(archive:to:limits:allowSymlinks:)`,
    /// without a free-space cap and without symlinks (any symlink entry refuses the archive).
    ///
    /// Entries reach the sink as they are read; on an error the extraction stops and throws, and removing
    /// what the sink already stored is its owner's job. Blocks the calling thread.
    public static func extract(archive: String, into sink: any EntrySink, limits: ExtractionLimits = ExtractionLimits()) throws -> ExtractionSummary {
        try extract(file: InputFile(path: archive), into: sink, limits: limits)
    }

    /// `extract(archive:into:limits:)` of an open file.
    static func extract(file: InputFile, into sink: any EntrySink, limits: ExtractionLimits) throws -> ExtractionSummary {
        let format = try ArchiveFormat.detect(file)
        let resolved = resolve(limits, archiveSize: Int64(file.size), space: (free: Int64.max, total: 0))
        return try run(file, format: format, sink: sink, limits: resolved, allowSymlinks: false)
    }

    private static func run(_ file: InputFile, format: ArchiveFormat, sink: any EntrySink, limits: Limits, allowSymlinks: Bool) throws -> ExtractionSummary {
        switch format {
        case .zip:
            let catalog = try ZipCatalog.read(file, limits: limits, allowSymlinks: allowSymlinks)
            try RatioGuard.check(catalog, limits)
            return try ZipExtraction.run(catalog, file: file, sink: sink)
        case .tar:
            return try TarExtraction(sink: sink, limits: limits, allowSymlinks: allowSymlinks).run(FileSource(file), format: .tar)
        case .tarGzip:
            return try TarExtraction(sink: sink, limits: limits, allowSymlinks: allowSymlinks).run(RatioGuard.gzip(file, limits), format: .tarGzip)
        case .gzip:
            return try GzipExtraction.run(file, sink: sink, limits: limits)
        }
    }

    static func resolve(_ limits: ExtractionLimits, archiveSize: Int64, space: (free: Int64, total: Int64)) -> Limits {
        let maxSize = limits.resolvedMaxSize(archiveSize: archiveSize, free: space.free, fileSystemSize: space.total)
        let reserve = ByteSize.format(ExtractionLimits.reserve(fileSystemSize: space.total))
        let hint =
            maxSize < limits.askedMaxSize(archiveSize: archiveSize)
            ? "that is the destination's free space less a reserve of \(reserve); free space on it"
            : limits.maxSize == nil
                ? "the default is \(ExtractionLimits.deflateCeiling) times the archive's size, the most deflate expands data; raise it (--max-size, --extract-max-size) if the archive is trusted"
                : "raise the limit (--max-size, --extract-max-size) if the archive is trusted"
        return Limits(maxSize: maxSize, maxEntries: limits.maxEntries, maxRatio: limits.maxRatio, holesCount: limits.maxSize != nil, sizeHint: hint)
    }
}
