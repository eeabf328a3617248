import HaulCore

/// Picks a safe local file name from a `Content-Disposition` header, like `curl -OJ` but stricter.
public enum ContentDisposition {
    /// The `filename*` (RFC 5987, UTF-8) or `filename` parameter, reduced to a safe base name.
    /// - Returns: `nil` when the header has no usable name.
    public static func filename(_ header: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in splitParameters(header).dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let key = parameter[..<equals].trimmingWhitespace().lowercased()
            var value = parameter[parameter.index(after: equals)...].trimmingWhitespace()
            if key == "filename*" {
                let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if pieces.count == 3, pieces[0].lowercased() == "utf-8" {
                    extended = percentDecode(String(pieces[2]))
                }
            } else if key == "filename" {
                if value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 {
                    value = String(value.dropFirst().dropLast()).replacingOccurrencesOfBackslashEscapes()
                }
                plain = value
            }
        }
        return (extended ?? plain).flatMap(sanitize)
    }

    /// Reduces a suggested name to one safe path component: the part after the last `/` or `\`,
    /// without control or bidi characters (`SafeText`), not `.`/`..`, not hidden, at most 200 bytes
    /// (a longer one is cut before its extension, so that `….tar.gz` still says what it is).
    /// Cut by scalars, not `Character`s: `/` or `.` followed by a combining mark is one `Character`
    /// that is neither (see `PathText`).
    public static func sanitize(_ name: String) -> String? {
        let base = name.unicodeScalars.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map { String($0) } ?? ""
        var cleaned = SafeText.strip(base)
        cleaned = cleaned.trimmingWhitespace()
        while cleaned.unicodeScalars.first == "." { cleaned.unicodeScalars.removeFirst() }
        cleaned = shortened(cleaned, toBytes: 200)
        return cleaned.isEmpty ? nil : cleaned
    }

    /// `name` cut to at most `limit` bytes of UTF-8, by whole `Character`s, keeping its
    /// extension (from the first `.` of a tail of at most 16 bytes, as in `.tar.gz`) where the
    /// stem leaves room for it.
    static func shortened(_ name: String, toBytes limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        var stem = name
        var suffix = ""
        if limit > 32, let dot = name.utf8.suffix(16).firstIndex(of: UInt8(ascii: ".")), dot != name.startIndex {
            stem = String(name[..<dot])
            suffix = String(name[dot...])
        }
        while !stem.isEmpty, stem.utf8.count + suffix.utf8.count > limit { stem.removeLast() }
        return stem + suffix
    }

    private static func splitParameters(_ header: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in header {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" && quoted {
                current.append(character)
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
                current.append(character)
            } else if character == ";" && !quoted {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts
    }

    private static func percentDecode(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

extension String {
    fileprivate func replacingOccurrencesOfBackslashEscapes() -> String {
        var result = ""
        var escaped = false
        for character in self {
            if escaped || character != "\\" {
                result.append(character)
                escaped = false
            } else {
                escaped = true
            }
        }
        return result
    }
}
