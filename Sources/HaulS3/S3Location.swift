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

    /// Parses `s3://BUCKET[/PATH]`; `what` names the flag in errors. Refuses other schemes and
    /// bucket names S3 does not allow (3 to 63 lower-case letters, digits, dots and dashes), and
    /// keys or prefixes `S3KeyRules` calls hazardous (a `..` segment, over 1024 bytes, …).
    public init(parsing text: String, what: String) throws {
        guard text.hasPrefix("s3://") else {
            let scheme = text.range(of: "://").map { String(text[..<$0.lowerBound]) } ?? text
            throw HaulError.usage("\(what) '\(text)' has the unknown scheme '\(scheme)'", hint: "give a local path or s3://BUCKET/KEY")
        }
        let rest = text.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        let allowed = bucket.allSatisfy { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "." || $0 == "-" }
        guard (3...63).contains(bucket.count), allowed, bucket.first != "-", bucket.first != "." else {
            throw HaulError.usage(
                "\(what) '\(text)' does not name a valid bucket", hint: "bucket names have 3 to 63 lower-case letters, digits, dots or dashes")
        }
        self.bucket = bucket
        path = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        // A '..' would be resolved away by the HTTP client (s3://b/../other/k writes bucket
        // 'other'); other tools would map such keys outside the prefix when they copy them out.
        if let problem = S3KeyRules.problem(withPath: path) {
            throw HaulError.usage("\(what) '\(text)' names a key that \(problem)", hint: S3KeyRules.hint)
        }
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

    /// `s3://bucket/path`.
    public var description: String { "s3://\(bucket)/\(path)" }
}
