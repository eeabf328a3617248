/// Text compared and hashed by its UTF-8 bytes, as the kernel, PostgreSQL and object stores
/// compare names.
///
/// Swift's `==` and hashing of `String` follow canonical equivalence: `"caf\u{e9}"` (NFC) and
/// `"cafe\u{301}"` (NFD) are one string to Swift, and two files on Linux, two rows' keys, two
/// objects. A set or dictionary keyed by `String` takes one for the other: it drops a file from
/// a sync, hands one file's descriptor to the other, drops a URL as a repeat, or grants one
/// URL what another earned. Where sameness lets something through or merges two things, names
/// are keyed by `ExactText`.
///
/// Checks that only refuse (a repeated archive entry, a name another URL of a get took, a
/// manifest's second line to one destination) keep Swift's equivalence on purpose: it refuses
/// more, and a file system that normalizes names (ZFS `normalization=`, ext4 `casefold`) takes
/// both spellings for one file.
public struct ExactText: Hashable, Sendable, CustomStringConvertible {
    /// The text as given.
    public let text: String

    public init(_ text: String) { self.text = text }

    public static func == (a: Self, b: Self) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

    public func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    public var description: String { text }
}

extension StringProtocol {
    /// Whether the two texts are the same bytes (not merely canonically equivalent).
    @inlinable
    public func sameBytes(as other: some StringProtocol) -> Bool { utf8.elementsEqual(other.utf8) }

    /// Whether `needle`'s bytes occur in the text's bytes. `contains` on `String`s goes through
    /// Foundation's locale-aware search, which cost a manifest more than its insert. Inlinable,
    /// so that callers get it specialized to their types rather than generic per byte.
    @inlinable
    public func containsBytes(of needle: some StringProtocol) -> Bool {
        let needle = needle.utf8
        guard let first = needle.first else { return true }
        let haystack = utf8
        var from = haystack.startIndex
        while let start = haystack[from...].firstIndex(of: first) {
            if haystack[start...].starts(with: needle) { return true }
            from = haystack.index(after: start)
        }
        return false
    }

    /// Whether the text's bytes start with `prefix`'s bytes.
    @inlinable
    public func startsWithBytes(of prefix: some StringProtocol) -> Bool { utf8.starts(with: prefix.utf8) }

    /// Whether the text's bytes end with `suffix`'s bytes. `hasSuffix` compares `Character`s,
    /// and a "prepend" mark such as U+0600 joins the character after it into one: as
    /// `Character`s, `"x\u{600}.gz"` does not end with `".gz"`.
    @inlinable
    public func endsWithBytes(of suffix: some StringProtocol) -> Bool { utf8.reversed().starts(with: suffix.utf8.reversed()) }

    /// The text without `suffix`, an ASCII extension such as `".tar.gz"`, matched by bytes and
    /// without regard to ASCII case (`A.ZIP` ends with `.zip`); `nil` if the text does not end
    /// with it. By bytes, as the file system names files: as `Character`s a mark such as U+0600
    /// would join the suffix's first character to the one before it.
    public func droppingASCIISuffix(_ suffix: String) -> Substring? {
        let text = Substring(self)
        guard text.utf8.count >= suffix.utf8.count else { return nil }
        let tail = text.utf8.suffix(suffix.utf8.count)
        guard tail.elementsEqual(suffix.utf8, by: { Self.asciiLowercased($0) == Self.asciiLowercased($1) }) else { return nil }
        // An ASCII suffix starts on a scalar boundary: no UTF-8 sequence ends in an ASCII byte.
        return Substring(text.utf8.dropLast(suffix.utf8.count))
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
