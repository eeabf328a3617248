extension Duration {
    /// Parses `500ms`, `30s`, `5m`, `2h`, `7d` (a bare number is seconds) into seconds.
    /// - Returns: `nil` unless the text is a positive duration.
    public static func parseSeconds(_ text: String) -> Double? {
        let lowered = text.trimmingWhitespace().lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400), ("", 1)]
        for (suffix, factor) in units where lowered.hasSuffix(suffix) {
            let number = lowered.dropLast(suffix.count)
            guard !number.isEmpty, number.allSatisfy({ $0.isASCIIDigit || $0 == "." }), let value = Double(number), value > 0 else { continue }
            return value * factor
        }
        return nil
    }

    /// Parses a duration for a flag, throwing a usage error that names it.
    public static func parseSeconds(_ text: String, flag: String) throws -> Double {
        guard let value = parseSeconds(text) else {
            throw HaulError.usage("\(flag) '\(text)' is not a duration", hint: "write it like 500ms, 30s, 5m or 2h")
        }
        return value
    }
}
