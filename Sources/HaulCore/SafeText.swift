/// Text from a peer (an origin's reason phrase, file name or header value, an upload server's
/// or S3's error message) made safe to show: no control characters that could forge a log
/// line or drive a terminal (`ESC]52;…` writes the clipboard, `ESC[2J` clears the screen), no
/// bidirectional overrides that could make `exe.txt` read as `txt.exe`.
public enum SafeText {
    /// What an unsafe scalar is shown as: U+FFFD, the replacement character, so the reader
    /// sees that something was there and the terminal receives nothing it acts on.
    public static let replacement: Unicode.Scalar = "\u{FFFD}"

    /// Whether a scalar is unsafe to show: C0 controls (tab and line breaks included) and DEL,
    /// C1 controls (U+0080–U+009F, the 8-bit CSI U+009B among them), the bidi embeddings and
    /// overrides (U+202A–U+202E), the bidi isolates (U+2066–U+2069), the invisible direction
    /// marks (U+200E, U+200F, U+061C) and the Unicode line and paragraph separators (U+2028,
    /// U+2029), which log viewers and JSON readers in JavaScript take for line breaks.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        if isControl(scalar) { return true }
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// A control character (Unicode's general category `Cc`: C0, DEL and C1), told by its value:
    /// asking for the category of every scalar of a manifest's URLs cost more than their insert.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `text` as one line: tabs and line breaks (U+2028 and U+2029 too) become one space each (a multi-line message
    /// stays readable on one line) and every other unsafe scalar becomes ``replacement``, so an
    /// escape sequence is left as harmless visible text (`ESC[2J` reads `�[2J`).
    public static func cleanLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\r" || scalar == "\t" || scalar == "\u{2028}" || scalar == "\u{2029}" {
                scalars.append(" ")
            } else {
                scalars.append(isUnsafe(scalar) ? replacement : scalar)
            }
        }
        return String(scalars)
    }

    /// `text` with its lines kept, for a body shown on a terminal: line feeds and tabs stay, a
    /// carriage return before a line feed is dropped, and every other unsafe scalar becomes
    /// ``replacement``.
    public static func cleanText(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0) && $0 != "\n" && $0 != "\t" }) else { return text }
        var scalars = String.UnicodeScalarView()
        var pendingReturn = false
        for scalar in text.unicodeScalars {
            if pendingReturn && scalar != "\n" { scalars.append(replacement) }
            pendingReturn = scalar == "\r"
            if scalar == "\n" || scalar == "\t" || !isUnsafe(scalar) {
                scalars.append(scalar)
            } else if scalar != "\r" {
                scalars.append(replacement)
            }
        }
        if pendingReturn { scalars.append(replacement) }
        return String(scalars)
    }

    /// `text` without the unsafe scalars, for a name that becomes a file's (a file name holding
    /// U+FFFD would be as hard to type as the control it stands for).
    public static func strip(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.lazy.filter { !isUnsafe($0) })
        return String(scalars)
    }
}
