/// Text from an origin (file names, header values, error bodies) made safe to show: no
/// control characters that could forge a log line or drive a terminal, no bidirectional
/// overrides that could make `exe.txt` read as `txt.exe`.
public enum SafeText {
    /// Whether a scalar is dropped: C0 controls and DEL, C1 controls (U+0080–U+009F), the bidi
    /// embeddings and overrides (U+202A–U+202E), the bidi isolates (U+2066–U+2069) and the
    /// invisible direction marks (U+200E, U+200F, U+061C).
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
        default: return false
        }
    }

    /// `text` without the unsafe scalars (see ``isUnsafe(_:)``); anything else is kept as is.
    public static func clean(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.lazy.filter { !isUnsafe($0) })
        return String(scalars)
    }

    /// Like ``clean(_:)`` for a log line: tabs and line breaks become one space each (so a
    /// multi-line message stays readable on one line) and the other unsafe scalars are dropped.
    public static func cleanLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\r" || scalar == "\t" {
                scalars.append(" ")
            } else if !isUnsafe(scalar) {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }
}
