/// The `Content-Disposition` header of one `multipart/form-data` part, quoted per RFC 7578.
///
/// RFC 7578 forbids `filename*`, so names travel as raw UTF-8 inside a quoted string and the
/// three characters a quoted string cannot hold are percent-encoded the way the WHATWG HTML
/// standard (and so every browser) does: `"` → `%22`, CR → `%0D`, LF → `%0A`. Backslashes are
/// left alone: backslash-escaping is the legacy form that modern parsers no longer undo.
/// libcurl 7.88 follows the same rule when it writes the header itself; Haul writes the header
/// so the result does not depend on the libcurl version (older ones backslash-escaped).
public enum FormDisposition {
    /// The full header line, `Content-Disposition: form-data; name="…"[; filename="…"]`.
    public static func header(name: String, filename: String? = nil) -> String {
        var value = "Content-Disposition: form-data; name=\(quote(name))"
        if let filename { value += "; filename=\(quote(filename))" }
        return value
    }

    /// `text` as a quoted string with `"`, CR and LF percent-encoded.
    public static func quote(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "%22"
            case "\r": quoted += "%0D"
            case "\n": quoted += "%0A"
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}
