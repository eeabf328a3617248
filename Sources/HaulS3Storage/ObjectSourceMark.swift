import HaulS3
import HaulStorage

/// `SourceMark` on S3 storage: an object Haul stores for a transfer carries the SHA-256 of the
/// transfer's URL as user metadata (`x-amz-meta-haul-source`), set when the object is created
/// (`PutObject`, `CreateMultipartUpload`; a completed upload keeps it). So a re-mirror, or a
/// `haul get -o s3://` run again, knows its own older object after `haul prune` deleted the
/// transfer that stored it, as it knows its own file on a POSIX root.
public enum ObjectSourceMark {
    /// The metadata's name (`x-amz-meta-` and this).
    static let name = "haul-source"

    /// The header line that marks a new object as stored from `url`.
    public static func metadata(for url: String) -> [String] {
        ["x-amz-meta-\(name): \(SourceMark.value(for: url))"]
    }

    /// Whether the object `head` describes carries a mark at all: Haul stored it, from some URL.
    public static func isMarked(_ head: S3Client.ObjectHead) -> Bool {
        head.metadata[name] != nil
    }

    /// Whether the object `head` describes carries the mark of `url`.
    public static func says(_ head: S3Client.ObjectHead, cameFrom url: String) -> Bool {
        head.metadata[name] == SourceMark.value(for: url)
    }
}
