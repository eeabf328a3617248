/// Parsing and formatting of byte counts as operators write them: `4096`, `512KiB`, `8MiB`, `1GiB`.
public enum ByteSize {
    private static let units: [(suffix: String, factor: Int64)] = [
        ("tib", 1 << 40), ("gib", 1 << 30), ("mib", 1 << 20), ("kib", 1 << 10),
        ("tb", 1_000_000_000_000), ("gb", 1_000_000_000), ("mb", 1_000_000), ("kb", 1_000),
        ("t", 1 << 40), ("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10), ("b", 1), ("", 1),
    ]

    /// Parses a positive size; `K`/`M`/`G` and `KiB`/`MiB`/`GiB` are powers of 1024, `KB`/`MB`/`GB` of 1000.
    /// - Returns: the size in bytes, or `nil` when the text is not a positive whole size.
    public static func parse(_ text: String) -> Int64? {
        let lowered = text.trimmingWhitespace().lowercased()
        for (suffix, factor) in units where lowered.hasSuffix(suffix) {
            let digits = lowered.dropLast(suffix.count).trimmingWhitespace()
            guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let value = Int64(digits), value > 0 else { continue }
            let (product, overflow) = value.multipliedReportingOverflow(by: factor)
            return overflow ? nil : product
        }
        return nil
    }

    /// Parses a size for a command-line flag, throwing a usage error that names the flag.
    public static func parse(_ text: String, flag: String) throws -> Int64 {
        guard let value = parse(text) else {
            throw HaulError.usage("\(flag) '\(text)' is not a size", hint: "write a positive size such as 4096, 512KiB, 8MiB or 1GiB")
        }
        return value
    }

    /// Formats a byte count for people, in binary units with one decimal: `1.5 GiB`.
    public static func format(_ bytes: Int64) -> String {
        let names = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
        var value = Double(bytes)
        var index = 0
        while value >= 1024, index < names.count - 1 {
            value /= 1024
            index += 1
        }
        if index == 0 { return "\(bytes) B" }
        let tenths = (value * 10).rounded() / 10
        return "\(tenths) \(names[index])"
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and newlines.
    public func trimmingWhitespace() -> String {
        // Over the contiguous UTF-8 bytes, not the Characters (nor a generic view, which is not
        // specialized across modules): every header line of every response passes here.
        var text = String(self)
        let trimmed: String? = text.withUTF8 { bytes in
            let all = UnsafeRawBufferPointer(bytes)[...]
            let kept = all.trimmingASCIIWhitespace()
            guard kept.count < all.count else { return nil }
            return String(decoding: UnsafeRawBufferPointer(rebasing: kept), as: UTF8.self)
        }
        return trimmed ?? text
    }
}

extension Character {
    /// Whether this is one of `0`–`9`.
    public var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
