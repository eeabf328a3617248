import HaulCore

/// Limits that make a hostile or mistaken archive fail before it fills the disk.
public struct ExtractionLimits: Sendable, Equatable {
    /// The most bytes the archive may expand to; `nil` means the free space of the destination's file system.
    public var maxSize: Int64?
    /// The most entries (files, directories and symlinks) the archive may hold.
    public var maxEntries: Int

    /// Creates limits; the defaults are the destination's free space and one million entries.
    public init(maxSize: Int64? = nil, maxEntries: Int = 1_000_000) {
        self.maxSize = maxSize
        self.maxEntries = maxEntries
    }
}

/// Limits with the size resolved to a number of bytes.
struct Limits {
    var maxSize: Int64
    var maxEntries: Int
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
    ///   - limits: refuse the archive past these totals (`too-large`, `too-many-entries`).
    ///   - allowSymlinks: create symlink entries (last, and only if they resolve inside `destination`);
    ///     otherwise any symlink entry refuses the archive (`symlink-refused`).
    /// - Throws: `HaulError` with one of the archive codes (`ArchiveError.swift`).
    public static func extract(
        archive: String, to destination: String, limits: ExtractionLimits = ExtractionLimits(), allowSymlinks: Bool = false
    ) throws -> ExtractionSummary {
        let file = try InputFile(path: archive)
        let format = try ArchiveFormat.detect(file)
        let staging = try Staging(destination: destination)
        do {
            let resolved = Limits(maxSize: limits.maxSize ?? staging.freeSpace(), maxEntries: limits.maxEntries)
            let summary: ExtractionSummary
            switch format {
            case .zip:
                let catalog = try ZipCatalog.read(file, limits: resolved, allowSymlinks: allowSymlinks)
                summary = try ZipExtraction.run(catalog, file: file, staging: staging)
            case .tar:
                summary = try TarExtraction(staging: staging, limits: resolved, allowSymlinks: allowSymlinks)
                    .run(FileSource(file), format: .tar)
            case .tarGzip:
                summary = try TarExtraction(staging: staging, limits: resolved, allowSymlinks: allowSymlinks)
                    .run(GzipSource(FileSource(file)), format: .tarGzip)
            case .gzip:
                summary = try GzipExtraction.run(file, staging: staging, limits: resolved)
            }
            try staging.publish()
            return summary
        } catch {
            staging.discard()
            throw error
        }
    }
}
