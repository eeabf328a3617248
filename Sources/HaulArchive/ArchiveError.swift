import Glibc
import HaulCore

/// The error kinds the archive module throws.
extension HaulError.Code {
    /// A name that is absolute, has a `..` component, a backslash, a drive prefix, a NUL, or is empty.
    ///
    /// Nothing was extracted: the archive may be hostile. Get it from a source you trust.
    public static let unsafeEntryName = Self("unsafe-entry-name", exit: ExitStatus.failure)
    /// Two entries with the same path, or an entry inside a path that is a file or a symlink.
    ///
    /// Nothing was extracted: the archive is malformed or hostile.
    public static let duplicateEntry = Self("duplicate-entry", exit: ExitStatus.failure)
    /// Entry data overlapping another entry or the central directory (a non-recursive zip bomb).
    ///
    /// Nothing was extracted: the archive is a zip bomb or damaged.
    public static let overlappingEntries = Self("overlapping-entries", exit: ExitStatus.failure)
    /// An entry that inflates past its declared size, or declares more than deflate could expand its data to.
    ///
    /// Nothing more is extracted: the archive lies about its sizes.
    public static let zipBomb = Self("zip-bomb", exit: ExitStatus.failure)
    /// A compressed entry (or gzip stream) that expands more than a ratio limit someone set (there is none by default).
    ///
    /// If the archive is trusted and really that compressible, raise or drop the ratio limit (`--max-ratio` of `haul
    /// extract`, `--extract-max-ratio` of `get`, `enqueue` and `worker`).
    public static let compressionRatio = Self("compression-ratio", exit: ExitStatus.failure)
    /// More entries than the entry limit.
    ///
    /// If the archive is trusted, raise the limit with `haul extract --max-entries N`.
    public static let tooManyEntries = Self("too-many-entries", exit: ExitStatus.failure)
    /// Truncated, garbled or inconsistent input, including CRC mismatches.
    ///
    /// Download the archive again; if it recurs, it is damaged at the source.
    public static let corruptArchive = Self("corrupt-archive", exit: ExitStatus.failure)
    /// The local header and the central directory disagree on an entry's name, method or flags.
    ///
    /// Nothing was extracted: the archive is damaged or crafted; get it again from a trusted source.
    public static let headerMismatch = Self("header-mismatch", exit: ExitStatus.failure)
    /// A compression method other than stored (0) or deflate (8).
    ///
    /// Repack the archive with stored or deflate compression, or extract it with another tool.
    public static let unsupportedMethod = Self("unsupported-method", exit: ExitStatus.failure)
    /// An encrypted entry; Haul never decrypts.
    ///
    /// Haul does not decrypt: extract it with a tool that has the password.
    public static let encryptedEntry = Self("encrypted-entry", exit: ExitStatus.failure)
    /// A symlink entry while symlinks are not allowed.
    ///
    /// `haul extract --allow-symlinks` creates symlinks that resolve inside the destination; S3 storage never
    /// holds symlinks.
    public static let symlinkRefused = Self("symlink-refused", exit: ExitStatus.failure)
    /// A symlink whose target is absolute or resolves outside the destination.
    ///
    /// Nothing was extracted: the archive may be hostile.
    public static let unsafeSymlink = Self("unsafe-symlink", exit: ExitStatus.failure)
    /// An entry kind Haul does not extract: hard links, devices, FIFOs, sparse files, multi-disk archives.
    ///
    /// Extract the archive with another tool if those entries are needed.
    public static let unsupportedEntry = Self("unsupported-entry", exit: ExitStatus.failure)
    /// Content that is none of zip, tar, gzip.
    ///
    /// Check that the file is a zip, tar, tar.gz or gz archive (an HTML error page saved instead, say).
    public static let unknownFormat = Self("unknown-format", exit: ExitStatus.failure)
    /// The destination exists and is not an empty directory.
    ///
    /// Give an empty or new folder, or add `--force`.
    public static let destinationNotEmpty = Self("destination-not-empty", exit: ExitStatus.usage)
    /// A system call failed (permissions, full disk, missing directory).
    ///
    /// Read the system's reason in the message (permissions, full disk, missing folder) and fix it.
    public static let io = Self("io-error", exit: ExitStatus.failure)
}

// The list `HaulError.Code(stored:among:)` reads stored codes back with; ErrorCodeTests checks
// that it holds every code declared above.
extension HaulError.Code {
    /// Every code the archive module declares.
    public static let archiveCodes: [Self] = [
        .unsafeEntryName, .duplicateEntry, .overlappingEntries, .zipBomb, .compressionRatio, .tooManyEntries, .corruptArchive, .headerMismatch,
        .unsupportedMethod, .encryptedEntry, .symlinkRefused, .unsafeSymlink, .unsupportedEntry, .unknownFormat, .destinationNotEmpty, .io,
    ]
}

extension HaulError {
    static func corrupt(_ message: String) -> HaulError {
        HaulError(HaulError.Code.corruptArchive, message, hint: "the archive is damaged or truncated; download it again")
    }

    static func unsafeName(_ name: String, _ reason: String) -> HaulError {
        HaulError(
            HaulError.Code.unsafeEntryName, "refusing archive: entry '\(printable(name))' \(reason)",
            hint: "nothing was extracted; the archive may be hostile")
    }

    static func archiveIO(_ what: String, _ path: String, errno code: Int32) -> HaulError {
        let reason = String(cString: strerror(code))
        return HaulError(HaulError.Code.io, "cannot \(what) '\(path)': \(reason)", transient: code == ENOSPC || code == EIO)
    }

    /// A name as it may be shown in a message: control characters escaped, at most 200 characters.
    public static func printable(_ name: String) -> String {
        let escaped = name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }
        let joined = escaped.joined()
        return joined.count > 200 ? String(joined.prefix(200)) + "…" : joined
    }
}
