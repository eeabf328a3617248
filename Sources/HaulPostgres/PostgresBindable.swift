import HaulCore

/// A Swift value that can be sent as a query parameter in PostgreSQL's text format.
public protocol PostgresBindable: Sendable {
    /// The parameter's text form, or `nil` for SQL `NULL`.
    var postgresText: String? { get }
}

extension String: PostgresBindable {
    public var postgresText: String? { self }
}

extension Int: PostgresBindable {
    public var postgresText: String? { String(self) }
}

extension Int32: PostgresBindable {
    public var postgresText: String? { String(self) }
}

extension Int64: PostgresBindable {
    public var postgresText: String? { String(self) }
}

extension Double: PostgresBindable {
    public var postgresText: String? { String(self) }
}

extension Bool: PostgresBindable {
    public var postgresText: String? { self ? "t" : "f" }
}

extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    // A closure, not `\.postgresText`: a key path through a generic `Wrapped` is instantiated
    // at run time on every call, a cost the profile of a batch of thousands of rows showed.
    public var postgresText: String? { self.flatMap { $0.postgresText } }
}

/// SQL `NULL` for a parameter whose type the statement fixes (`$3::bigint`).
public struct PostgresNull: PostgresBindable {
    /// Creates a `NULL`.
    public init() {}
    public var postgresText: String? { nil }
}

extension Array: PostgresBindable where Element: PostgresBindable {
    /// A one-dimensional array literal such as `{"1","2","3"}` or `{"a","b\"c",NULL}`: every
    /// element quoted, `"` and `\` escaped with a backslash (one pass over the bytes; batch
    /// statements send thousands of elements).
    public var postgresText: String? {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(count * 16 + 2)
        for index in indices {
            if index > startIndex { literal.append(UInt8(ascii: ",")) }
            let element = self[index]
            guard var text = element.postgresText else {
                literal.append(contentsOf: "NULL".utf8)
                continue
            }
            literal.append(quote)
            text.withUTF8 { bytes in
                // Most elements need no escape: copied in one go.
                guard bytes.contains(where: { $0 == quote || $0 == backslash }) else { return literal.append(contentsOf: bytes) }
                for byte in bytes {
                    if byte == quote || byte == backslash { literal.append(backslash) }
                    literal.append(byte)
                }
            }
            literal.append(quote)
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }
}

extension HaulError.Code: PostgresBindable {
    /// The kebab-case word, as stored in `transfers.error_code`.
    public var postgresText: String? { rawValue }
}
