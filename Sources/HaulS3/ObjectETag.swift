import HaulCore

/// What an object's ETag tells a finalizer: whether the object under its key is the one its
/// own upload stored, not one somebody else put there meanwhile, even of the same size.
public enum ObjectETag {
    /// Whether two ETags name the same object: equal but for S3's quotes and the hex digits' case.
    public static func same(_ a: String, _ b: String) -> Bool {
        unquoted(a).lowercased() == unquoted(b).lowercased()
    }

    /// The ETag S3 gives an object completed from a multipart upload: the MD5 of its parts' MD5s
    /// (their ETags, decoded from hex, in part order), in hex, then `-` and the number of parts
    /// (`81e2…6d-2`), as AWS S3, MinIO and SeaweedFS compute it. `nil` when one of `partETags`
    /// (quoted or not) is not a plain MD5 (an encrypted store's, say): then it cannot be known.
    public static func multipart(parts partETags: [String]) -> String? {
        guard !partETags.isEmpty else { return nil }
        var bytes: [UInt8] = []
        for etag in partETags {
            guard let digest = Checksum.bytes(ofHex: unquoted(etag)), digest.count == 16 else { return nil }
            bytes += digest
        }
        let digester = Digester(.md5)
        bytes.withUnsafeBytes { digester.update($0) }
        return "\(digester.finish().hex)-\(partETags.count)"
    }

    /// Whether `stored`, an object's ETag, is the one completing parts `partETags` gives.
    public static func matches(_ stored: String, parts partETags: [String]) -> Bool {
        guard let expected = multipart(parts: partETags) else { return false }
        return same(stored, expected)
    }

    /// `etag` without the double quotes S3 sends it in.
    private static func unquoted(_ etag: String) -> Substring {
        let bytes = etag.utf8
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return Substring(etag) }
        return Substring(bytes.dropFirst().dropLast())
    }
}
