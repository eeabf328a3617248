/// The rules an upload target (`--upload-to`, a manifest's `upload_to`) must pass: an http(s)
/// URL like an origin, or `s3://BUCKET/KEY` (a key ending in `/` takes the file's name).
public enum UploadTarget {
    /// Returns the target unchanged if Haul can upload to it, else throws a usage error that says why.
    public static func validate(_ text: String) throws -> String {
        if let scheme = text.range(of: "://").map({ text[..<$0.lowerBound].lowercased() }), !["http", "https", "s3"].contains(scheme) {
            throw HaulError.usage(
                "'\(Redaction.url(text))' uses the \(scheme): scheme, but haul uploads only to http(s) and s3 targets",
                hint: "give an http:// or https:// URL (multipart or tus), or s3://BUCKET/KEY")
        }
        guard text.hasPrefix("s3://") else { return try OriginURL.validate(text) }
        _ = try S3KeyRules.split(text, what: "the upload target")
        return text
    }
}
