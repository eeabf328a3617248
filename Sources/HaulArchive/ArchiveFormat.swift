import HaulCore

/// The archive formats Haul reads, told apart by their content rather than their name.
public enum ArchiveFormat: String, Sendable, Equatable, CaseIterable {
    /// A zip archive (starts with a local header or an end record).
    case zip
    /// An uncompressed ustar, pax or GNU tar archive.
    case tar
    /// A tar archive inside gzip (`.tar.gz`, `.tgz`).
    case tarGzip = "tar.gz"
    /// A single gzip-compressed file (one or more concatenated members).
    case gzip = "gz"

    /// Detects the format of the file at `path` from its first bytes (inflating the start of gzip data).
    /// - Throws: `unknown-format` when the content is none of the four, or an I/O error.
    public static func detect(path: String) throws -> ArchiveFormat {
        try detect(InputFile(path: path))
    }

    static func detect(_ file: InputFile) throws -> ArchiveFormat {
        let head = try file.bytes(Int(min(file.size, 512)), at: 0, what: "the archive header")
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) { return .zip }
        if head.starts(with: [0x1F, 0x8B]) {
            let source = GzipSource(FileSource(file))
            var block = [UInt8](repeating: 0, count: 512)
            let got = try block.withUnsafeMutableBytes { try source.readFully(into: $0.baseAddress!, count: 512) }
            return got == 512 && TarHeader.looksLikeTar(block) ? .tarGzip : .gzip
        }
        if head.count == 512, TarHeader.looksLikeTar(head) { return .tar }
        // The first part of a split zip opens with the spanning marker; a later part with entry data.
        if head.starts(with: [0x50, 0x4B, 0x07, 0x08]) { throw ZipEnd.multiDisk() }
        // A self-extracting zip (a program in front of the archive), or the last part of a split
        // one (its end record names another disk: reading it as a zip gives the multi-disk refusal).
        do {
            _ = try ZipEnd.locate(fileSize: UInt64(file.size)) { try file.bytes($1, at: Int64($0), what: "the zip end record") }
            return .zip
        } catch let error as HaulError where error.code == HaulError.Code.unsupportedEntry {
            return .zip
        } catch {}
        throw HaulError(
            HaulError.Code.unknownFormat, "'\(file.path)' is not a zip, tar, tar.gz or gz archive",
            hint: "Haul detects the format from the content, not the file name")
    }
}
