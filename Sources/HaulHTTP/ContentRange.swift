/// A parsed `Content-Range` header (RFC 9110 §14.4): `bytes 0-99/1000`, `bytes 0-99/*`, `bytes */1000`.
public struct ContentRange: Equatable, Sendable {
    /// First byte, inclusive; `nil` for the unsatisfied form `bytes */N`.
    public let first: Int64?
    /// Last byte, inclusive.
    public let last: Int64?
    /// Total size, `nil` when the origin sent `*`.
    public let total: Int64?

    /// Parses the header value; `nil` when it is not a well-formed byte range.
    public init?(_ value: String) {
        let text = value.trimmingWhitespace()
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst(6).trimmingWhitespace().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let totalText = parts[1].trimmingWhitespace()
        if totalText == "*" {
            total = nil
        } else {
            guard let value = Self.number(totalText) else { return nil }
            total = value
        }
        let range = parts[0].trimmingWhitespace()
        if range == "*" {
            guard total != nil else { return nil }
            first = nil
            last = nil
            return
        }
        let bounds = range.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(String(bounds[0])), let last = Self.number(String(bounds[1])), first <= last else { return nil }
        if let total, last >= total { return nil }
        self.first = first
        self.last = last
    }

    /// Creates a range from its parts.
    public init(first: Int64?, last: Int64?, total: Int64?) {
        self.first = first
        self.last = last
        self.total = total
    }

    private static func number(_ text: String) -> Int64? {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int64(text)
    }
}
