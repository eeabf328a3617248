import Foundation
import HaulTestSupport
import Testing

/// The KEDA scaler's database role (deploy/postgres/scaler-role.sql) can run
/// the ScaledObject's two queries and nothing else.
@Suite("security: KEDA scaler role")
struct ScalerRoleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `query:` texts of deploy/kubernetes/keda-scaledobject.yaml (plain or folded `>-`).
    static func kedaQueries() throws -> [String] {
        let yaml = try String(contentsOf: root.appendingPathComponent("deploy/kubernetes/keda-scaledobject.yaml"), encoding: .utf8)
        var queries: [String] = []
        var folded: [String]?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if var lines = folded {
                if text.isEmpty || text.contains(": ") || text.hasSuffix(":") {
                    queries.append(lines.joined(separator: " "))
                    folded = nil
                } else {
                    lines.append(text)
                    folded = lines
                    continue
                }
            }
            if text == "query: >-" {
                folded = []
            } else if text.hasPrefix("query: \"") {
                queries.append(String(text.dropFirst("query: \"".count).dropLast()))
            }
        }
        return queries
    }

    @Test func theScalerCountsWorkAndNothingElse() throws {
        let database = try TestDatabase()
        let script = Self.root.appendingPathComponent("deploy/postgres/scaler-role.sql").path
        for _ in 0..<2 {  // running it again is safe
            let setup = try Run.program(
                "/usr/bin/psql", ["-X", "-q", "-v", "scaler_password=EXAMPLE-pw", "-f", script, database.url], environment: [:])
            #expect(setup.status == 0, "\(setup.stderr)")
        }
        _ = try database.scalar(
            "INSERT INTO transfers (url, host, segment_size, state) VALUES ('https://u:pw@h.example/x?sig=1', 'h.example', 65536, 'pending')")
        let scaler = database.url.replacingOccurrences(of: "postgres@", with: "haul_scaler:EXAMPLE-pw@")
        let queries = try Self.kedaQueries()
        #expect(queries.count == 2, "\(queries)")
        for query in queries {
            let result = try Run.psql(scaler, query)
            #expect(result.status == 0, "\(query): \(result.stderr)")
            #expect(Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) != nil, "\(query): \(result.stdout)")
        }
        for forbidden in [
            "SELECT url FROM transfers", "SELECT headers FROM transfers", "SELECT * FROM segments", "UPDATE transfers SET state = 'failed'",
            "DELETE FROM segments", "CREATE TABLE x (a int)",
        ] {
            let result = try Run.psql(scaler, forbidden)
            #expect(result.status != 0, "\(forbidden) must be refused: \(result.stdout)")
        }
    }
}
