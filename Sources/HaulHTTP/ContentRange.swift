import HaulCore

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
        var value = value
        guard let parts = value.withUTF8({ Self.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
        (first, last, total) = parts
    }

    /// `bytes FIRST-LAST/TOTAL`, `bytes FIRST-LAST/*` or `bytes */TOTAL` (the unit in any case,
    /// spaces around the parts but not inside the bounds), over the value's bytes: every ranged
    /// answer's head is parsed here.
    private static func parse(_ value: UnsafeRawBufferPointer) -> (first: Int64?, last: Int64?, total: Int64?)? {
        let text = value[...].trimmingASCIIWhitespace()
        let unit = "bytes ".utf8
        guard text.count >= unit.count, zip(text, unit).allSatisfy({ ASCIIBytes.lowercased($0) == $1 }) else { return nil }
        let spec = text.dropFirst(unit.count)
        guard let slash = spec.firstIndex(of: UInt8(ascii: "/")), !spec[(slash + 1)...].contains(UInt8(ascii: "/")) else { return nil }
        let range = spec[..<slash].trimmingASCIIWhitespace()
        let totalPart = spec[(slash + 1)...].trimmingASCIIWhitespace()
        var total: Int64?
        if !totalPart.elementsEqual("*".utf8) {
            guard let value = number(totalPart) else { return nil }
            total = value
        }
        if range.elementsEqual("*".utf8) {
            guard total != nil else { return nil }
            return (nil, nil, total)
        }
        guard let dash = range.firstIndex(of: UInt8(ascii: "-")), !range[(dash + 1)...].contains(UInt8(ascii: "-")),
            let first = number(range[..<dash]), let last = number(range[(dash + 1)...]), first <= last
        else { return nil }
        if let total, last >= total { return nil }
        return (first, last, total)
    }

    private typealias Bytes = Slice<UnsafeRawBufferPointer>

    /// A non-negative decimal that fits in 64 bits, digits only.
    private static func number(_ digits: Bytes) -> Int64? {
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard (0x30...0x39).contains(byte) else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(Int64(byte - 0x30))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }

    /// Creates a range from its parts.
    public init(first: Int64?, last: Int64?, total: Int64?) {
        self.first = first
        self.last = last
        self.total = total
    }
}
