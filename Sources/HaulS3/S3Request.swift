/// One S3 API request before signing: method, URL and extra header lines. Pure, so the rules
/// SeaweedFS and libcurl's SigV4 signer need are tested without a network.
public struct S3Request: Sendable, Equatable {
    public var method: String
    public var url: String
    /// `Name: value` lines besides the ones every request carries.
    public var headers: [String]

    /// A request of `method` on `key` (none: the bucket itself) with `query` sub-resources and
    /// parameters. Query items are sorted and always written `name=value`, with an empty value
    /// as `name=` (`?uploads=`): libcurl 7.88 signs the query as written, and S3 servers
    /// canonicalise `?uploads` as `uploads=`, so anything else fails with SignatureDoesNotMatch.
    public init(_ method: String, config: S3Config, bucket: String, key: String? = nil, query: [(String, String)] = [], headers: [String] = []) {
        self.method = method
        self.headers = headers
        let path = key.map { "/" + Self.encode($0, keepSlash: true) } ?? "/"
        var base: String
        if config.usesPathStyle(for: bucket) {
            base = config.endpoint + "/" + bucket + (key == nil ? "" : path)
        } else {
            let scheme = config.endpoint.hasPrefix("http://") ? "http://" : "https://"
            base = scheme + bucket + "." + config.endpoint.dropFirst(scheme.count) + path
        }
        if !query.isEmpty {
            let items = query.sorted { $0.0 < $1.0 }.map { Self.encode($0.0, keepSlash: false) + "=" + Self.encode($0.1, keepSlash: false) }
            base += "?" + items.joined(separator: "&")
        }
        url = base
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters (and `/` in keys), the
    /// way SigV4's canonical request wants it.
    public static func encode(_ text: String, keepSlash: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            case UInt8(ascii: "/") where keepSlash:
                out.append("/")
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (byte < 16 ? "0" + hex : hex)
            }
        }
        return out
    }
}

/// S3's part rules: 5 MiB to 5 GiB per part (the last may be smaller), at most 10 000 parts,
/// objects of at most 5 TiB.
public enum S3PartRules {
    public static let minimumPart: Int64 = 5 << 20
    public static let maximumPart: Int64 = 5 << 30
    public static let maximumParts: Int64 = 10_000
    /// The largest object S3 stores.
    public static let maximumObject: Int64 = 5 << 40

    /// The part size to cut a file of `size` bytes with when `requested` was asked for: at
    /// least the minimum, grown so that the file fits in 10 000 parts, at most the maximum.
    public static func partSize(fileSize size: Int64, requested: Int64) -> Int64 {
        let needed = (size + maximumParts - 1) / maximumParts
        let mebibyte: Int64 = 1 << 20
        let grown = (max(requested, minimumPart, needed) + mebibyte - 1) / mebibyte * mebibyte
        return min(grown, maximumPart)
    }

    /// The size of every part after the first when a file of `size` bytes (at most
    /// ``maximumObject``) starts with a part of `first` bytes (5 MiB to 5 GiB: the probe's own
    /// range, already fixed) and `requested` was asked for: at least the minimum, in whole MiB,
    /// grown so that the first part and the others make at most 10 000, at most the maximum.
    /// (``partSize(fileSize:requested:)`` alone would let a short first part add a 10 001st.)
    public static func partSize(fileSize size: Int64, first: Int64, requested: Int64) -> Int64 {
        let rest = max(size - first, 0)
        let needed = (rest + maximumParts - 2) / (maximumParts - 1)
        let mebibyte: Int64 = 1 << 20
        let grown = (max(requested, minimumPart, needed) + mebibyte - 1) / mebibyte * mebibyte
        return min(grown, maximumPart)
    }
}
