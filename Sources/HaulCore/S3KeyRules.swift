import Foundation

/// What makes a key hazardous to write: keys that other S3 tools would map to a path outside the
/// intended prefix, or that S3 cannot store. Pure.
public enum S3KeyRules {
    /// The longest key S3 stores, in UTF-8 bytes.
    public static let maximumLength = 1024

    /// What a refusal tells the user to do.
    public static let hint = "S3 keys must be at most \(maximumLength) bytes without control characters or empty, '.' or '..' segments"

    /// The bucket and path of `s3://BUCKET[/PATH]` (leading slashes of the path dropped), or a
    /// usage error naming `what` (`-o`, `--storage`, …) for a bucket name no S3 store allows, or
    /// a hazardous key or prefix (`problem`). Besides today's AWS names (3 to 63 lower-case
    /// letters, digits, dots and dashes), names with upper case or underscores (older AWS
    /// buckets, Google Cloud Storage) and up to 255 characters are accepted: they are reached
    /// with path-style addressing (`S3Config.usesPathStyle`). `text` must start with `s3://`.
    public static func split(_ text: String, what: String) throws -> (bucket: String, path: String) {
        let rest = text.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        let allowed = bucket.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
        guard (3...255).contains(bucket.count), allowed, bucket.first != "-", bucket.first != "." else {
            throw HaulError.usage(
                "\(what) '\(text)' does not name a valid bucket",
                hint: "bucket names have 3 to 255 letters, digits, dots, dashes or underscores, and start with a letter or digit")
        }
        let path = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        // A '..' would be resolved away by the HTTP client (s3://b/../other/k writes bucket
        // 'other'); other tools would map such keys outside the prefix when they copy them out.
        if let problem = problem(withPath: path) {
            throw HaulError.usage("\(what) '\(text)' names a key that \(problem)", hint: hint)
        }
        return (bucket, path)
    }

    /// Why the key or prefix of an `s3://BUCKET/PATH` target must not be used (as `problem`),
    /// or `nil`: `path` as written after the bucket, leading slashes dropped; a trailing `/` marks
    /// a prefix, and an empty path is the bucket itself.
    static func problem(withPath path: String) -> String? {
        let key = path.endsWithSlash ? String(path.dropLast()) : path
        return key.isEmpty ? nil : problem(with: key)
    }

    /// Why `key` must not be written (a phrase to follow "the key …"), or `nil` when it is fine:
    /// empty, over 1024 bytes, a leading `/`, an empty, `.` or `..` segment, a control character.
    public static func problem(with key: String) -> String? {
        if key.isEmpty { return "is empty" }
        if key.utf8.count > maximumLength { return "is \(key.utf8.count) bytes long, more than S3's \(maximumLength)" }
        if key.startsWithSlash { return "starts with '/'" }
        if key.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) { return "contains a control character" }
        for segment in key.slashComponents(keepingEmpty: true) {
            if segment.isEmpty { return "has an empty segment ('//' or a trailing '/')" }
            if segment == "." || segment == ".." { return "has a '\(segment)' segment" }
        }
        return nil
    }
}
