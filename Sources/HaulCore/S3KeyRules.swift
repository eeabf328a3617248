/// What makes a key hazardous to write: keys that other S3 tools would map to a path outside the
/// intended prefix, or that S3 cannot store. Pure.
public enum S3KeyRules {
    /// The longest key S3 stores, in UTF-8 bytes.
    public static let maximumLength = 1024

    /// What a refusal tells the user to do.
    public static let hint = "S3 keys must be at most \(maximumLength) bytes without control characters or empty, '.' or '..' segments"

    /// Why the key or prefix of an `s3://BUCKET/PATH` target must not be used (as `problem`),
    /// or `nil`: `path` as written after the bucket, leading slashes dropped; a trailing `/` marks
    /// a prefix, and an empty path is the bucket itself.
    public static func problem(withPath path: String) -> String? {
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
