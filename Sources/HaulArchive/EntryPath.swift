import HaulCore

/// The rules every entry name must pass before anything is written (pure, so tests can hit them directly).
enum EntryPath {
    /// Normalises an archive entry name to a relative path without `.` components or a trailing slash.
    ///
    /// - Returns: the path, or `nil` when the name denotes the destination itself (`./`).
    /// - Throws: `unsafe-entry-name` for empty, NUL-bearing, absolute, backslashed, drive-prefixed or `..` names.
    static func normalize(_ name: String) throws -> String? {
        if name.isEmpty { throw HaulError.unsafeName(name, "has an empty name") }
        if name.utf8.contains(0) { throw HaulError.unsafeName(name, "contains a NUL character") }
        if name.utf8.contains(UInt8(ascii: "\\")) { throw HaulError.unsafeName(name, "contains a backslash") }
        if name.startsWithSlash { throw HaulError.unsafeName(name, "is an absolute path") }
        let parts = name.slashComponents()
        if let first = parts.first, first.utf8.count >= 2, first.utf8.dropFirst().first == UInt8(ascii: ":") {
            throw HaulError.unsafeName(name, "has a drive prefix")
        }
        if parts.contains("..") { throw HaulError.unsafeName(name, "has a '..' component") }
        let kept = parts.filter { $0 != "." }
        return kept.isEmpty ? nil : kept.joined(separator: "/")
    }

    /// Every proper ancestor of a normalised path, shortest first: `a/b/c` gives `a`, `a/b`.
    static func ancestors(of path: String) -> [String] {
        let parts = path.slashComponents()
        return parts.indices.dropLast().map { parts[...$0].joined(separator: "/") }
    }

    /// Decodes a name that is not flagged UTF-8 as IBM code page 437, as the zip specification says.
    static func decodeCP437(_ bytes: [UInt8]) -> String {
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            if byte < 0x80 {
                scalars.append(Unicode.Scalar(byte))
            } else {
                scalars.append(cp437High[Int(byte - 0x80)])
            }
        }
        return String(scalars)
    }

    /// Decodes a name flagged UTF-8 (general purpose bit 11), refusing invalid sequences.
    static func decodeUTF8(_ bytes: [UInt8]) throws -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw HaulError.unsafeName(decodeCP437(bytes), "is flagged UTF-8 but is not valid UTF-8")
        }
        return text
    }

    private static let cp437High: [Unicode.Scalar] = Array(
        ("ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀"
            + "αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{00A0}").unicodeScalars)
}
