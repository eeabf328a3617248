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
        let bucket = text.dropFirst("s3://".count).prefix { $0 != "/" }
        // A space is a key's own (`-o s3://b/a b.iso` stores one too); a line break is a control
        // character, refused with the key's other hazards below.
        guard bucket.count >= 3, !bucket.contains(" ") else {
            throw HaulError.usage("'\(text)' does not name an S3 bucket and key", hint: "write it as s3://BUCKET/KEY (bucket names have 3 or more characters)")
        }
        let path = String(text.dropFirst("s3://".count + bucket.count).drop { $0 == "/" })
        if let problem = S3KeyRules.problem(withPath: path) {
            throw HaulError.usage("the upload target '\(text)' names a key that \(problem)", hint: S3KeyRules.hint)
        }
        return text
    }
}
