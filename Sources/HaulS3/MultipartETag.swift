import HaulCore

/// The ETag S3 gives an object completed from a multipart upload: the MD5 of its parts' MD5s
/// (their ETags, decoded from hex, in part order), in hex, then `-` and the number of parts
/// (`"81e2…6d-2"`). Knowing the parts' ETags, a finalizer can tell the object its own completion
/// made from one someone else put under the key, even one of the same size.
public enum MultipartETag {
    /// The ETag of an object completed from parts with `partETags` (quoted or not), or `nil`
    /// when one of them is not a plain MD5 (an encrypted store's, say): then it cannot be known.
    public static func of(parts partETags: [String]) -> String? {
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
        guard let expected = of(parts: partETags) else { return false }
        return unquoted(stored).lowercased() == expected
    }

    /// `etag` without the double quotes S3 sends it in.
    private static func unquoted(_ etag: String) -> Substring {
        let bytes = etag.utf8
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return Substring(etag) }
        return Substring(bytes.dropFirst().dropLast())
    }
}
