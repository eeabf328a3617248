import Foundation
import HaulPostgres
import Testing

/// Query parameters against a real server: what Haul sends is what PostgreSQL reads.
@Suite("query parameters")
struct ParameterTests {
    @Test("array parameters arrive element for element: quotes, backslashes, commas, braces, NULL, empty, non-ASCII")
    func arrays() throws {
        let connection = try PostgresConnection(conninfo: Harness.databaseServer)
        let values: [String?] = ["plain", "", "a,b", "{x}", #"say "hi""#, #"back\slash"#, #"\""#, "NULL", nil, "naïve ✓", " spaced ", "new\nline"]
        let rows = try connection.query("SELECT ord, value FROM unnest($1::text[]) WITH ORDINALITY AS t(value, ord) ORDER BY ord", [values]).rows
        #expect(rows.count == values.count)
        for (row, expected) in zip(rows, values) { #expect(row["value"] == expected) }
        let numbers: [Int64] = [0, -1, 9_223_372_036_854_775_807]
        #expect(try connection.query("SELECT sum(n)::text AS s FROM unnest($1::bigint[]) AS n", [numbers]).first?["s"] == "9223372036854775806")
    }
}
