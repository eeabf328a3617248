import HaulCore

/// One row of a query result, in text format, with typed accessors by column name.
public struct PostgresRow: Sendable {
    let columns: [String: Int]
    let values: [String?]

    /// The raw text of a column, `nil` for SQL `NULL`.
    public subscript(_ column: String) -> String? {
        guard let index = columns[column] else { preconditionFailure("query did not select column \(column)") }
        return values[index]
    }

    /// A non-null text column.
    public func string(_ column: String) throws -> String {
        guard let value = self[column] else { throw decodeError(column, "is NULL") }
        return value
    }

    /// A non-null integer column (`int`, `bigint`, `numeric` without fraction).
    public func int64(_ column: String) throws -> Int64 {
        guard let value = try optionalInt64(column) else { throw decodeError(column, "is NULL") }
        return value
    }

    /// An integer column that may be `NULL`.
    public func optionalInt64(_ column: String) throws -> Int64? {
        guard let text = self[column] else { return nil }
        guard let value = Int64(text) else { throw decodeError(column, "'\(text)' is not an integer") }
        return value
    }

    /// A non-null integer column as `Int`.
    public func int(_ column: String) throws -> Int { Int(try int64(column)) }

    /// A non-null `boolean` column.
    public func bool(_ column: String) throws -> Bool {
        switch self[column] {
        case "t": return true
        case "f": return false
        case let other: throw decodeError(column, "'\(other ?? "NULL")' is not a boolean")
        }
    }

    /// A floating-point column that may be `NULL`.
    public func optionalDouble(_ column: String) throws -> Double? {
        guard let text = self[column] else { return nil }
        guard let value = Double(text) else { throw decodeError(column, "'\(text)' is not a number") }
        return value
    }

    private func decodeError(_ column: String, _ problem: String) -> HaulError {
        HaulError(
            .databaseDecode, "column \(column) \(problem)",
            hint: "the database schema may be newer than this haul; run 'haul migrate' with a matching version")
    }
}
