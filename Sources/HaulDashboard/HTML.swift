import HaulCore

/// HTML text built only through escaping: everything from the database (URLs, error texts,
/// worker names) is hostile, so it goes into pages through `HTML.text` and `HTML.attribute`.
public enum HTML {
    /// `text` escaped for an element's content or a double-quoted attribute value: `& < > " '`
    /// become character references.
    public static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `text` percent-encoded for one path segment or query value (everything but unreserved characters).
    public static func urlComponent(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }

    /// A query string (`?a=1&b=2`) of the non-empty values, in the order given; empty when none.
    public static func query(_ pairs: [(String, String?)]) -> String {
        let parts = pairs.compactMap { name, value -> String? in
            guard let value, !value.isEmpty else { return nil }
            return urlComponent(name) + "=" + urlComponent(value)
        }
        return parts.isEmpty ? "" : "?" + parts.joined(separator: "&")
    }

    /// Decodes `application/x-www-form-urlencoded` (`+` is a space); malformed escapes stay as they are.
    public static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            fields[percentDecode(parts[0])] = parts.count > 1 ? percentDecode(parts[1]) : ""
        }
        return fields
    }

    private static func percentDecode(_ bytes: ArraySlice<UInt8>) -> String {
        var output: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), bytes.distance(from: index, to: bytes.endIndex) >= 3,
                let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                output.append(value)
                index += 2
            } else {
                output.append(byte)
            }
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
