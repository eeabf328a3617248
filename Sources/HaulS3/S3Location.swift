import HaulCore

/// A place in a bucket named by an `s3://BUCKET[/KEY-OR-PREFIX]` URL.
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    /// The bucket.
    public let bucket: String
    /// The key or key prefix, without a leading slash (may be empty).
    public let path: String

    /// Whether `text` is URL-like (`scheme://…`), so it must never be taken as a local path.
    public static func isURLLike(_ text: String) -> Bool {
        guard let range = text.range(of: "://") else { return false }
        let scheme = text[..<range.lowerBound]
        return !scheme.isEmpty && scheme.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
    }

    /// Parses `s3://BUCKET[/PATH]`; `what` names the flag in errors. Refuses other schemes, and
    /// what `S3KeyRules.split` refuses (a bucket name S3 does not allow, a `..` segment, …).
    public init(parsing text: String, what: String) throws {
        guard text.hasPrefix("s3://") else {
            let scheme = text.range(of: "://").map { String(text[..<$0.lowerBound]) } ?? text
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
