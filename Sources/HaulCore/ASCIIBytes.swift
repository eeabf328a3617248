/// Byte-level pieces of ASCII protocol text (header lines, `Content-Range`, manifests), for the
/// hot paths that must not go through `Character`s.
public enum ASCIIBytes {
    /// Space, tab, CR or LF: the whitespace `trimmingWhitespace` removes.
    public static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// `A`–`Z` in lower case; every other byte unchanged.
    public static func lowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }

    /// `bytes` as lower-case hex, two digits a byte (`0a1b…`): digests and MACs. Written digit
    /// by digit into one buffer, because a `String` per byte cost more than the SHA-256 itself.
    public static func hex(_ bytes: some Collection<UInt8>) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            digits.withUTF8Buffer { digit in
                var index = 0
                for byte in bytes {
                    buffer[index] = digit[Int(byte >> 4)]
                    buffer[index + 1] = digit[Int(byte & 0x0F)]
                    index += 2
                }
                return index
            }
        }
    }
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
