import HaulCore

/// A place in a bucket named by an `s3://BUCKET[/KEY-OR-PREFIX]` URL.
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    /// The bucket.
    public let bucket: String
    /// The key or key prefix, without a leading slash (may be empty).
    public let path: String

    /// Whether `text` is URL-like, so it must never be taken as a local path: `scheme://…`, and
    /// the slips `scheme:/…` and `s3:…` (`s3:/bucket` once saved into a local folder named `s3:`).
    /// A scheme is a letter and at least one more letter, digit, `+`, `-` or `.`.
    public static func isURLLike(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        let scheme = text[..<colon]
        guard scheme.count >= 2, scheme.first?.isLetter == true,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
        else { return false }
        return text[text.index(after: colon)...].hasPrefix("/") || scheme.lowercased() == "s3"
    }

    /// Parses `s3://BUCKET[/PATH]`; `what` names the flag in errors. Refuses other schemes, and
    /// what `S3KeyRules.split` refuses (a bucket name S3 does not allow, a `..` segment, …).
    public init(parsing text: String, what: String) throws {
        guard text.hasPrefix("s3://") else {
            if text.lowercased().hasPrefix("s3:") {
                throw HaulError.usage("\(what) '\(text)' is not an S3 URL", hint: "write s3://BUCKET/KEY, in lower case and with two slashes")
            }
            let scheme = text.firstIndex(of: ":").map { String(text[..<$0]) } ?? text
            throw HaulError.usage("\(what) '\(text)' has the unknown scheme '\(scheme)'", hint: "give a local path or s3://BUCKET/KEY")
        }
        (bucket, path) = try S3KeyRules.split(text, what: what)
    }

    /// A location from its parts.
    public init(bucket: String, path: String) {
        self.bucket = bucket
        self.path = path
    }

    /// The key of `relative` under this location taken as a prefix (`PREFIX/relative`).
    public func key(for relative: String) -> String {
        guard !path.isEmpty else { return relative }
        return path.endsWithSlash ? path + relative : path + "/" + relative
    }

    /// The path taken as a folder: every key under it starts so (`PREFIX/`; empty at the root).
    public var folder: String { key(for: "") }

    /// `s3://bucket/path`.
    public var description: String { "s3://\(bucket)/\(path)" }
}
