/// The `Content-Type` an object is stored with: the origin's, when it is a plain header value,
/// else `application/octet-stream`. Sent on every `PutObject` and `CreateMultipartUpload` (a
/// bodiless POST would otherwise carry libcurl's `application/x-www-form-urlencoded`, and the
/// object would keep it).
public enum S3ContentType {
    /// The type stored when the origin names none, or one that cannot be sent as it is.
    public static let fallback = "application/octet-stream"

    /// The header line for an object whose origin answered with `origin` (`nil`: none): printable
    /// ASCII only, runs of blanks made one space, at most 256 characters.
    public static func header(_ origin: String?) -> String {
        "Content-Type: " + value(origin)
    }

    /// The value ``header(_:)`` sends.
    public static func value(_ origin: String?) -> String {
        guard let origin else { return fallback }
        let words = origin.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let cleaned = words.joined(separator: " ")
        guard !cleaned.isEmpty, cleaned.utf8.count <= 256, cleaned.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return fallback }
        return cleaned
    }
}
