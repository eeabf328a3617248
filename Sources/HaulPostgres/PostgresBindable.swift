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
    public var postgresText: String? { self.flatMap(\.postgresText) }
}

/// SQL `NULL` for a parameter whose type the statement fixes (`$3::bigint`).
public struct PostgresNull: PostgresBindable {
    /// Creates a `NULL`.
    public init() {}
    public var postgresText: String? { nil }
}

extension Array: PostgresBindable where Element: PostgresBindable {
    /// A one-dimensional array literal such as `{1,2,3}` or `{"a","b\"c"}`.
    public var postgresText: String? {
        let items = map { element -> String in
            guard let text = element.postgresText else { return "NULL" }
            let escaped = text.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"")
            return "\"\(escaped)\""
        }
        return "{" + items.joined(separator: ",") + "}"
    }
}

extension String {
    /// Every occurrence of `target` replaced by `replacement` (no Foundation needed).
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
