/// Paths cut as the kernel cuts them: at every `/` byte.
///
/// Swift splits, searches and compares a `String` by `Character` (extended grapheme cluster),
/// and a `/` followed by a combining mark is one `Character` that is not `/`:
/// `"../\u{301}x".split(separator: "/")` is a single component, `"/\u{301}x".hasPrefix("/")` is
/// false, while the kernel reads `..` then `\u{301}x`, and an absolute path. A check of a path
/// made of `Character`s can therefore pass a `..` or a leading `/` it was written to refuse.
/// Every path or key that comes from outside (a destination, an archive entry, a link target,
/// an object key) is cut with these instead.
extension Substring {
    /// The components between `/` bytes: `"a//b/"` gives `a`, `b`; with `keepingEmpty`, `a`, ``, `b`, ``.
    public func slashComponents(keepingEmpty: Bool = false) -> [Substring] {
        // Cut over the bytes: a `/` byte is never part of a longer UTF-8 sequence, so each piece
        // starts and ends on a scalar boundary.
        utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: !keepingEmpty).map { Substring($0) }
    }

    /// The last non-empty component (`"a/b/"` gives `b`), or `nil` when there is none.
    public var lastSlashComponent: Substring? { slashComponents().last }

    /// Whether the text ends with a `/` byte (a directory's name in an archive, a key prefix).
    public var endsWithSlash: Bool { utf8.last == UInt8(ascii: "/") }

    /// The index of the last `/` byte, or `nil` when there is none.
    public var lastSlashIndex: Index? { unicodeScalars.lastIndex(of: "/") }
}

extension String {
    /// `Substring.slashComponents`: the components between `/` bytes.
    public func slashComponents(keepingEmpty: Bool = false) -> [Substring] { self[...].slashComponents(keepingEmpty: keepingEmpty) }

    /// `Substring.lastSlashComponent`: the last non-empty component between `/` bytes.
    public var lastSlashComponent: Substring? { self[...].lastSlashComponent }

    /// `Substring.endsWithSlash`: whether the text ends with a `/` byte.
    public var endsWithSlash: Bool { self[...].endsWithSlash }

    /// `Substring.lastSlashIndex`: the index of the last `/` byte, or `nil` when there is none.
    public var lastSlashIndex: Index? { self[...].lastSlashIndex }

    /// The path without its trailing `/` bytes (`a//` gives `a`); a lone `/` stays. By bytes: as
    /// `Character`s, a mark that joins the next character (U+0600) would take the `/` with it.
    public var trimmingTrailingSlashes: String {
        var bytes = utf8[...]
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The folder holding this path: `/a/b` for `/a/b/c`, `/` for `/c`, `.` for `c`.
    public var parentFolder: String {
        guard let slash = lastSlashIndex else { return "." }
        return slash == startIndex ? "/" : String(self[..<slash])
    }
}

extension StringProtocol {
    /// Whether the text starts with a `/` byte (an absolute path).
    public var startsWithSlash: Bool { utf8.first == UInt8(ascii: "/") }

    /// Whether the text has a `/` byte anywhere.
    public var containsSlash: Bool { utf8.contains(UInt8(ascii: "/")) }
}
