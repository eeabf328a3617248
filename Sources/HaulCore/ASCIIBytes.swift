/// Byte-level pieces of ASCII protocol text (header lines, `Content-Range`, manifests), for the
/// hot paths that must not go through `Character`s.
public enum ASCIIBytes {
    /// Space, tab, CR or LF: the whitespace `trimmingWhitespace` removes.
    public static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// `A`–`Z` in lower case; every other byte unchanged.
    public static func lowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }
}

extension Slice where Base == UnsafeRawBufferPointer {
    /// These bytes without leading and trailing ASCII whitespace (`ASCIIBytes.isWhitespace`).
    public func trimmingASCIIWhitespace() -> Self {
        var start = startIndex
        var end = endIndex
        while start < end, ASCIIBytes.isWhitespace(self[start]) { start += 1 }
        while end > start, ASCIIBytes.isWhitespace(self[end - 1]) { end -= 1 }
        return self[start..<end]
    }
}
