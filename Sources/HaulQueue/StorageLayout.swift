import HaulCore

/// How a transfer's file is laid out on its storage (`transfers.layout`).
public enum StorageLayout: String, Sendable, Equatable, CaseIterable {
    /// One file on a POSIX root, each segment written in place at its offset (the default).
    case inplace
    /// A file per segment on a POSIX root, concatenated by the finalizer (object-store mounts).
    case parts
    /// An S3 object: one `PutObject`, or a multipart upload of a part per segment.
    case s3

    /// The layout a row's `layout` column names.
    /// - Throws: `internal` for a value no version of Haul writes.
    public init(recorded text: String) throws {
        guard let layout = StorageLayout(rawValue: text) else {
            throw HaulError(.`internal`, "the database holds the unknown layout '\(text)'")
        }
        self = layout
    }
}
