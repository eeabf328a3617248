extension Duration {
    /// Parses `500ms`, `30s`, `5m`, `2h`, `7d`, compounds such as `1h30m` or `2d12h`, and a
    /// bare number (seconds) into seconds.
    /// - Parameter allowZero: whether `0s` is accepted (`prune --older-than 0s`).
    /// - Returns: `nil` unless the text is a positive duration (or zero when allowed).
    public static func parseSeconds(_ text: String, allowZero: Bool = false) -> Double? {
        let lowered = text.trimmingWhitespace().lowercased()
        guard !lowered.isEmpty else { return nil }
        if lowered.allSatisfy({ $0.isASCIIDigit || $0 == "." }) {
            guard let value = Double(lowered) else { return nil }
            return value > 0 || (allowZero && value == 0) ? value : nil
        }
        var total = 0.0
        var rest = Substring(lowered)
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCIIDigit || $0 == "." }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            guard !number.isEmpty, let value = Double(number), let factor = factors[String(unit)] else { return nil }
            total += value * factor
        }
        return total > 0 || (allowZero && total == 0) ? total : nil
    }

    private static let factors: [String: Double] = ["ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400]

    /// Parses a duration for a flag, throwing a usage error that names it.
    public static func parseSeconds(_ text: String, flag: String, allowZero: Bool = false) throws -> Double {
        guard let value = parseSeconds(text, allowZero: allowZero) else {
            throw HaulError.usage("\(flag) '\(text)' is not a duration", hint: "write it like 500ms, 30s, 5m, 2h, 7d or 1h30m")
        }
        return value
    }
}
